"""Training-side analyses of one arm (METHOD §5, §9), from its runs' metrics and rollouts.

- Curves per run: reward, pass rate, entropy, CF availability, credit mass, masked share by step.
- Masked rollouts by cause per arm and run (a sandbox that died, a run past its whole limit, a
  timeout that did not reproduce alone, an infrastructure failure inside the episode, ...).
- Health per run and pooled over the arm: CF queries sent / available / non-zero, credit mass,
  entropy at the first and last step, masked share, alerts by name, generated tokens.
- Failure categories per step bucket (format errors, PASS_TO_PASS regressions, context-budget
  endings), pooled over the arm's runs with each step weighted by its rollouts (by its unmasked
  rollouts for regressions, which are rated over unmasked rollouts).
- Learning against the no-learning control: per run, the training pass rate per step minus the
  base policy's on the same draws (``stats.learning``), and over the last quarter of steps; the
  arm's health carries the mean over its runs.
- Encounter effect: per task, the pass rate at its k-th encounter minus the first, where an
  encounter is a step in which the task had at least one unmasked rollout (masked rollouts never
  reached the loss); averaged over the arm's seeds per task, then over tasks with a bootstrap CI
  over tasks (:func:`~editcredit.stats.bootstrap.mean_ci`). Beside the configured k: the last
  encounter minus the first over tasks seen at least three times (``k = "last"``), and every
  row's mean again with its most influential task left out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from editcredit.stats._records import to_plain
from editcredit.stats.bootstrap import mean_ci
from editcredit.stats.credit import credit_diagnostics
from editcredit.stats.encounter import (
    encounter_differences,
    last_encounter_differences,
    most_influential,
)
from editcredit.stats.learning import learning_vs_control
from editcredit.stats.records import (
    ArmHealth,
    BootstrapSettings,
    EncounterRecord,
    FailureBucket,
    RunHealth,
    TrainingRecord,
    WithoutInfluential,
)

__all__ = [
    "arm_encounter",
    "failure_buckets",
    "run_curves",
    "run_health",
    "step_buckets",
    "training_record",
]

CURVE_COLUMNS = ("reward_mean", "pass_rate", "entropy", "credit_mass_l1", "masked_share")
#: A failure rate of a step bucket (a column of metrics.parquet).
Failure = Literal["format_error_rate", "p2p_regression_rate", "context_budget_rate"]


def _ratio(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


def _finite_mean(values: pd.Series) -> float | None:
    v = values.astype(float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else None


def _alerts(metrics: pd.DataFrame) -> Counter[str]:
    names: Counter[str] = Counter()
    for text in metrics["alerts"]:
        for alert in json.loads(text or "[]"):
            names[str(alert).split(":", 1)[0]] += 1
    return names


def _masked_by_cause(metrics: pd.DataFrame) -> dict[str, int]:
    """Masked rollouts by cause, summed over steps (metrics written before the column
    existed count nothing here)."""
    total: Counter[str] = Counter()
    for cell in metrics.get("masked_by_cause", pd.Series(dtype=object)):
        if isinstance(cell, str) and cell:
            total.update({str(k): int(v) for k, v in json.loads(cell).items()})
    return dict(sorted(total.items()))


def run_curves(metrics: pd.DataFrame) -> dict[str, list[Any]]:
    """Per-step series of one run (``None`` where a value is undefined)."""
    out: dict[str, list[Any]] = {"step": [int(s) for s in metrics["step"]]}
    for col in CURVE_COLUMNS:
        out[col] = to_plain([float(x) for x in metrics[col]])
    out["cf_availability"] = [
        _ratio(a, s) for a, s in zip(metrics["cf_available"], metrics["cf_sent"], strict=True)
    ]
    return out


def run_health(metrics: pd.DataFrame) -> RunHealth:
    """Health summary of one run (or of several runs' metrics concatenated)."""
    sent, avail = int(metrics["cf_sent"].sum()), int(metrics["cf_available"].sum())
    first = metrics[metrics["step"] == metrics["step"].min()]
    last = metrics[metrics["step"] == metrics["step"].max()]
    rollouts = int(metrics["rollouts"].sum())
    masked = float((metrics["masked_share"].fillna(0) * metrics["rollouts"]).sum())
    alerts = _alerts(metrics)
    return {
        "steps": int(metrics["step"].nunique()),
        "rollouts": rollouts,
        "cf_sent": sent,
        "cf_available": avail,
        "cf_nonzero": int(metrics["cf_nonzero"].sum()),
        "cf_availability": _ratio(avail, sent),
        "credit_mass_l1_mean": _finite_mean(metrics["credit_mass_l1"]),
        "credit_mass_signed_mean": _finite_mean(metrics["credit_mass_signed"]),
        "entropy_first": _finite_mean(first["entropy"]),
        "entropy_last": _finite_mean(last["entropy"]),
        "reward_first": _finite_mean(first["reward_mean"]),
        "reward_last": _finite_mean(last["reward_mean"]),
        "masked_share": _ratio(masked, rollouts),
        "masked_by_cause": _masked_by_cause(metrics),
        "alerts": dict(sorted(alerts.items())),
        "n_alerts": int(sum(alerts.values())),
        "generated_tokens": int(metrics["generated_tokens"].sum()),
    }


def step_buckets(endpoint: int, n_buckets: int) -> list[tuple[int, int]]:
    """Split steps ``1..endpoint`` into at most ``n_buckets`` contiguous, near-equal ranges."""
    if endpoint < 1 or n_buckets < 1:
        raise ValueError(f"endpoint {endpoint} and n_buckets {n_buckets} must be >= 1")
    edges = np.linspace(0, endpoint, min(n_buckets, endpoint) + 1).round().astype(int)
    return [(int(lo) + 1, int(hi)) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]


def _weighted_rate(part: pd.DataFrame, col: Failure, weights: pd.Series) -> float | None:
    """The rate ``col`` over the steps of ``part``, weighted (steps where it is undefined left
    out)."""
    ok = np.isfinite(part[col].astype(float))
    return _ratio(float((part[col][ok] * weights[ok]).sum()), float(weights[ok].sum()))


def failure_buckets(
    metrics: pd.DataFrame, buckets: Sequence[tuple[int, int]]
) -> list[FailureBucket]:
    """Failure rates per step bucket, rollout-weighted over every step (and run) in it."""
    out: list[FailureBucket] = []
    for lo, hi in buckets:
        part = metrics[(metrics["step"] >= lo) & (metrics["step"] <= hi)]
        n = part["rollouts"].astype(float)
        live = n * (1.0 - part["masked_share"].fillna(0.0))
        out.append(
            {
                "steps": [lo, hi],
                "rollouts": int(n.sum()),
                "format_error_rate": _weighted_rate(part, "format_error_rate", n),
                "p2p_regression_rate": _weighted_rate(part, "p2p_regression_rate", live),
                "context_budget_rate": _weighted_rate(part, "context_budget_rate", n),
            }
        )
    return out


def _encounter_rows(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Per (task, step) pass rate over unmasked rollouts, and the encounter number of the step."""
    live = rollouts[~rollouts["masked"].astype(bool)]
    groups = live.groupby(["instance_id", "step"], sort=True)["Y"].mean().reset_index()
    groups["encounter"] = groups.groupby("instance_id").cumcount() + 1
    return groups


#: The learning record's means over the last quarter of steps that an arm's health averages.
LastQuarter = Literal["run_pass_last_quarter", "control_pass_last_quarter", "delta_last_quarter"]

#: The encounter row that compares each task's last encounter with its first.
LAST = "last"
#: Encounters a task needs to enter the last-minus-first row.
LAST_MIN_ENCOUNTERS = 3


def arm_encounter(
    rollouts_by_run: Mapping[str, pd.DataFrame],
    *,
    k: int | str,
    n_resamples: int,
    rng_seed: int,
    level: float,
) -> EncounterRecord:
    """Encounter effect of one arm: per task ``rate[k] - rate[1]`` (``k`` = ``"last"``: the last
    encounter of tasks seen at least three times) averaged over its runs, the mean over tasks
    with its CI, and the same with the most influential task left out."""
    per_task: dict[str, list[float]] = {}
    seen: set[str] = set()
    for run, rollouts in rollouts_by_run.items():
        rows = _encounter_rows(rollouts)
        seen.update(map(str, rows["instance_id"]))
        columns = (list(rows["instance_id"]), list(rows["encounter"]), list(rows["Y"]))
        try:
            if k == LAST:
                run_tasks, diffs, _ = last_encounter_differences(
                    *columns, min_encounters=LAST_MIN_ENCOUNTERS
                )
            else:
                run_tasks, diffs, _ = encounter_differences(*columns, k=int(k))
        except ValueError as exc:
            raise ValueError(f"run {run}: {exc}") from exc
        for task, diff in zip(run_tasks, diffs, strict=True):
            per_task.setdefault(task, []).append(diff)
    tasks = sorted(per_task)
    means = [float(np.mean(per_task[t])) for t in tasks]
    boot: BootstrapSettings = {"n_resamples": n_resamples, "rng_seed": rng_seed, "level": level}
    ci = mean_ci(means, **boot) if means else None
    influential = most_influential(tasks, means)
    without: WithoutInfluential | None = None
    if influential is not None:
        rest = means[: influential[1]] + means[influential[1] + 1 :]
        rest_ci = mean_ci(rest, **boot)
        without = {
            "task": influential[0],
            "mean_difference": rest_ci.estimate,
            "ci": rest_ci.to_dict(),
        }
    return {
        "k": k,
        "n_tasks": len(tasks),
        "n_tasks_seen": len(seen),
        "n_tasks_without_kth": len(seen) - len(tasks),
        "mean_difference": None if ci is None else ci.estimate,
        "ci": None if ci is None else ci.to_dict(),
        "without_most_influential": without,
        "tasks": tasks,
        "task_differences": means,
    }


def training_record(
    arm: str,
    metrics_by_run: Mapping[str, pd.DataFrame],
    rollouts_by_run: Mapping[str, pd.DataFrame],
    *,
    controls_by_run: Mapping[str, pd.DataFrame],
    credit_by_run: Mapping[str, pd.DataFrame],
    endpoint_step: int,
    n_buckets: int,
    encounter_ks: Sequence[int],
    n_resamples: int,
    rng_seed: int,
    level: float,
) -> TrainingRecord:
    """Everything the paper shows about one arm's training (see the module docstring)."""
    if not metrics_by_run:
        raise ValueError(f"arm {arm}: no runs")
    pooled = pd.concat(list(metrics_by_run.values()), ignore_index=True)
    buckets = step_buckets(endpoint_step, n_buckets)
    boot: BootstrapSettings = {"n_resamples": n_resamples, "rng_seed": rng_seed, "level": level}
    learning = {
        run: learning_vs_control(rollouts_by_run[run], controls_by_run[run], endpoint_step)
        for run in metrics_by_run
    }

    def run_mean(key: LastQuarter) -> float | None:
        return _finite_mean(pd.Series([r[key] for r in learning.values()], dtype=float))

    health: ArmHealth = {
        **run_health(pooled),
        "runs": len(metrics_by_run),
        "run_pass_last_quarter": run_mean("run_pass_last_quarter"),
        "control_pass_last_quarter": run_mean("control_pass_last_quarter"),
        "delta_last_quarter": run_mean("delta_last_quarter"),
    }
    encounter_at: list[int | str] = [*encounter_ks, LAST]
    return {
        "arm": arm,
        "runs": list(metrics_by_run),
        "endpoint_step": endpoint_step,
        "curves": {run: run_curves(m) for run, m in metrics_by_run.items()},
        "health_by_run": {run: run_health(m) for run, m in metrics_by_run.items()},
        "learning_vs_control": learning,
        "health": health,
        "failures": failure_buckets(pooled, buckets),
        "credit": credit_diagnostics(credit_by_run, metrics_by_run),
        "encounter": [arm_encounter(rollouts_by_run, k=k, **boot) for k in encounter_at],
        "bootstrap": {**boot, "method": "percentile"},
    }
