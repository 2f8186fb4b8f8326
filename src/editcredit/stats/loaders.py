"""Read upstream result files into the inputs of the statistics (no models, no sandboxes).

- Eval slots (``results/eval/{model}/{evalset}/slots.parquet``, docs/outputs.md): one row per
  planned slot with a nullable verdict. :func:`evalset_plan` takes the planned tasks and the
  number of samples per task from the rows; :func:`score_model` scores one model with
  :func:`~editcredit.stats.scores.score_table` (unresolved slots stay in the denominator).
- Training rollouts (``runs/{run}/step_{N}/rollouts.parquet``): the tasks a run trained on
  (:func:`training_tasks`), and the per-(step, task) pass rates of the encounter analysis.
- Training metrics (``runs/{run}/step_{N}/metrics.parquet``): one row per step.
- Frozen task records (``data/frozen/{suite}/tasks.parquet``): each task's number of planted
  bugs (:func:`read_bug_counts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from editcredit.data.freeze import BUGS_COLUMN
from editcredit.stats.arms import ArmScores
from editcredit.stats.scores import EvalSetScore, score_table

__all__ = [
    "SLOT_COLUMNS",
    "arm_scores",
    "evalset_plan",
    "read_bug_counts",
    "read_metrics",
    "read_rollouts",
    "read_slots",
    "score_model",
    "training_tasks",
    "unresolved_reasons",
]

SLOT_COLUMNS = ("model", "evalset", "instance_id", "sample", "verdict", "state", "reason")
ROLLOUT_COLUMNS = ("instance_id", "step", "sample", "Y", "masked")


def _read_parquet(path: str | Path, columns: Sequence[str], what: str) -> pd.DataFrame:
    schema = pq.read_schema(path)
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ValueError(f"{path}: {what} lacks column(s) {missing} (see docs/outputs.md)")
    return pq.read_table(path, columns=list(columns)).to_pandas()


def read_slots(path: str | Path) -> pd.DataFrame:
    """One model's slots on one eval set; the verdict stays nullable (``pandas.NA``)."""
    frame = _read_parquet(path, SLOT_COLUMNS, "slots table")
    if frame.empty:
        raise ValueError(f"{path}: no slots (an eval set has at least one planned slot)")
    models = frame["model"].unique()
    if len(models) != 1:
        raise ValueError(f"{path}: slots of several models {sorted(models)[:3]}")
    frame["verdict"] = frame["verdict"].astype("Int8")
    return frame


def evalset_plan(
    frames: Iterable[pd.DataFrame], n_samples: int | None = None
) -> tuple[tuple[str, ...], int]:
    """Planned tasks (sorted union of the tasks of ``frames``) and samples per task.

    ``n_samples`` is the planned n of the eval set (config ``evaluation.evalsets``); without it,
    the largest sample index + 1. Every planned slot has a row (docs/outputs.md); a task or sample
    absent from one model's rows but present in another's is planned for both and counts as
    unresolved where it is missing.
    """
    tasks: set[str] = set()
    seen = 0
    for frame in frames:
        tasks.update(map(str, frame["instance_id"]))
        seen = max(seen, int(frame["sample"].max()) + 1)
    if not tasks:
        raise ValueError("no eval slots given")
    if n_samples is not None and n_samples > 0:
        if seen > n_samples:
            raise ValueError(f"slots hold sample index {seen - 1}, but n = {n_samples} is planned")
        return tuple(sorted(tasks)), int(n_samples)
    return tuple(sorted(tasks)), seen


def score_model(frame: pd.DataFrame, tasks: Sequence[str], n_samples: int) -> EvalSetScore:
    """Score one model over the planned ``tasks`` with ``n_samples`` slots each (METHOD §8)."""
    return score_table(
        frame,
        n_samples=n_samples,
        planned_tasks=tasks,
        task_column="instance_id",
        sample_column="sample",
        value_column="verdict",
    )


def arm_scores(
    arm: str, frames_by_seed: Mapping[int, pd.DataFrame], tasks: Sequence[str], n_samples: int
) -> ArmScores:
    """An arm's (seed x task) score bounds from one slots table per training seed."""
    return ArmScores.from_eval_scores(
        arm, {seed: score_model(f, tasks, n_samples) for seed, f in frames_by_seed.items()}
    )


def unresolved_reasons(frame: pd.DataFrame) -> dict[str, int]:
    """Unresolved slots of one model by reason (sorted by reason)."""
    unresolved = frame[frame["verdict"].isna()]
    counts = unresolved["reason"].fillna("").replace("", "unknown").value_counts()
    return {str(k): int(v) for k, v in sorted(counts.items())}


def read_rollouts(paths: Iterable[str | Path], columns: Sequence[str] = ROLLOUT_COLUMNS):
    """The given columns of the rollouts of several segments, concatenated."""
    frames = [_read_parquet(p, columns, "rollouts table") for p in paths]
    if not frames:
        return pd.DataFrame({c: [] for c in columns})
    return pd.concat(frames, ignore_index=True)


def training_tasks(paths: Iterable[str | Path]) -> set[str]:
    """Instance ids present in the training rollouts ``paths`` (the in-pool tasks)."""
    return set(map(str, read_rollouts(paths, ["instance_id"])["instance_id"]))


def read_credit(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The credit ledgers of several segments, concatenated (empty for arms without queries)."""
    frames = [pq.read_table(p).to_pandas() for p in paths]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_metrics(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Per-step training metrics of several segments, sorted by step; a step twice is an error."""
    frames = [pq.read_table(p).to_pandas() for p in paths]
    if not frames:
        raise ValueError("no metrics files given")
    metrics = pd.concat(frames, ignore_index=True).sort_values("step", kind="stable")
    dup = metrics["step"][metrics["step"].duplicated()]
    if not dup.empty:
        raise ValueError(f"metrics: step {int(dup.iloc[0])} appears in two segments")
    return metrics.reset_index(drop=True)


def read_bug_counts(path: str | Path) -> dict[str, int]:
    """Task -> its number of planted bugs, from a frozen suite's task records: the length of a
    multi-bug task's ``bugs``, 1 for every other task (a suite without the ``bugs`` column has
    single-bug tasks only, docs/task-schema.md)."""
    names = pq.read_schema(path).names
    columns = ["instance_id"] + ([BUGS_COLUMN] if BUGS_COLUMN in names else [])
    table = pq.read_table(path, columns=columns).to_pydict()
    bugs = table.get(BUGS_COLUMN, [None] * len(table["instance_id"]))
    return {
        str(task): 1 if text is None else len(json.loads(text))
        for task, text in zip(table["instance_id"], bugs, strict=True)
    }
