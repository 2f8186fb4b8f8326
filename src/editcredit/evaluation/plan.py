"""The slot plan: models x eval sets x tasks x sample index (METHOD §8).

One row per slot, written once to ``results/eval/plan.parquet`` with the SHA256 of its canonical
content. A changed plan is a new version: every plan ever written is archived under its hash
(``results/eval/plans/v{version}-{sha}.parquet``) and ``plan.json`` lists the versions, so an
earlier plan is never edited in place. Eval sets are separate populations (never pooled): each
row names its eval set, and every slice (one model on one eval set) has its own hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from editcredit.data.task import Task, canonical_json
from editcredit.io.hashing import sha256_text
from editcredit.io.provenance import PARQUET_KEY
from editcredit.settings import EvalSetSettings

PLAN_SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("evalset", pa.string()),
        ("instance_id", pa.string()),
        ("sample", pa.int16()),
        ("suite", pa.string()),
        ("split", pa.string()),
        ("task_sha256", pa.string()),
        ("run", pa.string()),
        ("step", pa.int32()),
        ("diagnostic", pa.bool_()),
        ("model_dir", pa.string()),
    ]
)
#: File names beside the per-task slot files that a task id must not take.
RESERVED_NAMES = frozenset({"slots", "scores", "predictions", "attempts", "plan"})
META_SHA, META_VERSION = b"editcredit.plan_sha256", b"editcredit.plan_version"


class PlanError(ValueError):
    """The plan cannot be built or read as asked; the message names the model/eval set/file."""


@dataclass(frozen=True)
class ModelSpec:
    """One evaluated model: its name, HF directory, run and step; ``diagnostic`` marks an
    intermediate checkpoint (evaluated only when asked, never the main comparison);
    ``evalsets`` the eval sets it is evaluated on (empty: every one); ``samples`` its samples
    per task on each of them (0: the eval set's own)."""

    name: str
    model_dir: str
    run: str = ""
    step: int = 0
    diagnostic: bool = False
    evalsets: tuple[str, ...] = ()
    samples: int = 0

    @classmethod
    def from_mapping(cls, name: str, record: Mapping[str, Any]) -> ModelSpec:
        """The model of its plan record (``editcredit.study_plan.EvalModel.plan_record``: every
        key given, none defaulted here)."""
        return cls(
            name,
            str(record["dir"]),
            str(record["run"]),
            int(record["step"]),
            bool(record["diagnostic"]),
            tuple(record["evalsets"]),
            int(record["samples"]),
        )

    def evaluated_on(self, evalset: str) -> bool:
        return not self.evalsets or evalset in self.evalsets

    def samples_on(self, spec: EvalSetSpec) -> int:
        """Samples per task of this model on eval set ``spec``."""
        return self.samples or spec.samples


@dataclass(frozen=True)
class EvalSetSpec:
    """One eval set: tasks of ``splits`` of ``suite`` (``max_tasks`` > 0 keeps the first
    ``max_tasks`` in SHA256(instance_id) order), each sampled ``samples`` times."""

    name: str
    suite: str
    splits: tuple[str, ...]
    samples: int
    max_tasks: int
    with_training_pool: bool

    @classmethod
    def from_mapping(cls, name: str, section: Mapping[str, Any]) -> EvalSetSpec:
        """The eval set of config ``evaluation.evalsets.<name>`` (the schema filled its keys),
        read strictly as :class:`~editcredit.settings.EvalSetSettings`."""
        return cls.from_settings(
            name, EvalSetSettings.from_mapping(section, f"evaluation.evalsets.{name}")
        )

    @classmethod
    def from_settings(cls, name: str, evalset: EvalSetSettings) -> EvalSetSpec:
        spec = cls(
            name,
            evalset.suite,
            tuple(evalset.splits),
            evalset.samples,
            evalset.max_tasks,
            evalset.with_training_pool,
        )
        if spec.samples < 1:
            raise PlanError(f"eval set {name}: samples must be >= 1, got {spec.samples}")
        if not spec.splits:
            raise PlanError(f"eval set {name}: no splits")
        return spec


def diagnostic_steps(
    ends: Sequence[int], endpoint: int, every: int, listed: Sequence[int] = ()
) -> list[int]:
    """The intermediate checkpoints evaluated for the holdout curve: every ``every``-th segment
    end (0: none) and the ``listed`` steps, each before the endpoint (the endpoint is the claim,
    evaluated anyway). A listed step that is no segment end before the endpoint is refused; an
    ``every`` past the plan's segments asks for nothing."""
    if every < 0:
        raise PlanError(f"config evaluation.diagnostic_every is {every}; it must be 0 or more")
    before = [e for e in ends if e < endpoint]
    for step in listed:
        if step not in before:
            raise PlanError(
                f"config evaluation.diagnostic_steps: {step} is not a segment end before "
                f"the endpoint {endpoint}"
            )
    chosen = {e for i, e in enumerate(before, start=1) if every and i % every == 0}
    return sorted(chosen | set(listed))


def select_tasks(
    spec: EvalSetSpec, tasks: Sequence[Task], training_pool: Sequence[str] = ()
) -> list[Task]:
    """The eval set's tasks, sorted by instance id: those of its splits (the first
    ``max_tasks`` in SHA256 order when set), and with ``with_training_pool`` every task of
    ``training_pool`` among them too."""
    of_splits = [t for t in tasks if t.split in spec.splits]
    chosen = of_splits
    if spec.max_tasks:
        chosen = sorted(of_splits, key=lambda t: sha256_text(t.instance_id))[: spec.max_tasks]
    if spec.with_training_pool:
        kept = {t.instance_id for t in chosen}
        chosen += [t for t in of_splits if t.instance_id in set(training_pool) - kept]
    if not chosen:
        raise PlanError(
            f"eval set {spec.name}: suite {spec.suite} has no task in splits {list(spec.splits)}"
        )
    for t in chosen:
        if t.instance_id in RESERVED_NAMES or "/" in t.instance_id:
            raise PlanError(f"eval set {spec.name}: task id {t.instance_id!r} is not a file name")
    return sorted(chosen, key=lambda t: t.instance_id)


def build_plan(
    models: Sequence[ModelSpec],
    evalsets: Sequence[EvalSetSpec],
    tasks_by_suite: Mapping[str, Sequence[Task]],
    training_pool: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Every slot, in plan order: model, eval set, task (by id), sample; ``training_pool`` the
    pool's task ids (for the sets ``with_training_pool``)."""
    if not models:
        raise PlanError("no models to evaluate")
    if not evalsets:
        raise PlanError("no eval sets")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise PlanError(f"duplicate model names in {names}")
    for model in models:
        if model.samples < 0:
            raise PlanError(f"model {model.name}: samples must be >= 0, got {model.samples}")
    rows = []
    for spec in evalsets:
        if spec.suite not in tasks_by_suite:
            raise PlanError(f"eval set {spec.name}: suite {spec.suite} was not given")
    for model in models:
        unknown = sorted(set(model.evalsets) - {s.name for s in evalsets})
        if unknown:
            raise PlanError(f"model {model.name}: unknown eval sets {unknown}")
    chosen = {s.name: select_tasks(s, tasks_by_suite[s.suite], training_pool) for s in evalsets}
    for model in models:
        for spec in (s for s in evalsets if model.evaluated_on(s.name)):
            for task in chosen[spec.name]:
                sha = task.sha256()
                for sample in range(model.samples_on(spec)):
                    rows.append(
                        {
                            "model": model.name,
                            "evalset": spec.name,
                            "instance_id": task.instance_id,
                            "sample": sample,
                            "suite": spec.suite,
                            "split": task.split,
                            "task_sha256": sha,
                            "run": model.run,
                            "step": model.step,
                            "diagnostic": model.diagnostic,
                            "model_dir": model.model_dir,
                        }
                    )
    return rows


def content_sha256(rows: Sequence[Mapping[str, Any]]) -> str:
    """SHA256 of the canonical JSON of the rows (independent of the Parquet writer)."""
    h = hashlib.sha256()
    for row in rows:
        h.update(canonical_json({k: row[k] for k in PLAN_SCHEMA.names}).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def write_plan(
    rows: Sequence[Mapping[str, Any]],
    plan_path: str | Path,
    archive_dir: str | Path,
    block: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the plan with its hash and version; archive it under its hash (never edited).

    The version is the archived version of an identical plan, else one more than the highest
    archived version. ``block`` (the provenance block) goes into the Parquet metadata.
    Returns the summary written to ``plan.json`` by the caller.
    """
    plan_path, archive_dir = Path(plan_path), Path(archive_dir)
    sha = content_sha256(rows)
    archive_dir.mkdir(parents=True, exist_ok=True)
    versions = archived_versions(archive_dir)
    same = [v for v, s in versions.items() if s == sha]
    version = same[0] if same else max(versions, default=0) + 1
    meta = {META_SHA: sha.encode(), META_VERSION: str(version).encode()}
    if block is not None:
        meta[PARQUET_KEY] = json.dumps(dict(block), sort_keys=True).encode()
    table = pa.Table.from_pylist(list(rows), schema=PLAN_SCHEMA).replace_schema_metadata(meta)
    archived = archive_dir / f"v{version:04d}-{sha[:16]}.parquet"
    if not archived.exists():
        _write_table(table, archived)
    _write_table(table, plan_path)
    slices: dict[str, dict[str, int]] = {}
    for row in rows:
        slices.setdefault(row["model"], {}).setdefault(row["evalset"], 0)
        slices[row["model"]][row["evalset"]] += 1
    return {
        "plan_sha256": sha,
        "version": version,
        "slots": len(rows),
        "slots_by_model_and_evalset": slices,
        "archive": archived.as_posix(),
        "versions": [{"version": v, "plan_sha256": s} for v, s in sorted(versions.items())]
        + ([] if same else [{"version": version, "plan_sha256": sha}]),
    }


def archived_versions(archive_dir: Path) -> dict[int, str]:
    """Version -> plan SHA256 of every archived plan (read from the Parquet metadata)."""
    out = {}
    for path in sorted(archive_dir.glob("v*-*.parquet")):
        meta = pq.read_schema(path).metadata or {}
        out[int(meta[META_VERSION])] = meta[META_SHA].decode()
    return out


def _write_table(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)


@dataclass(frozen=True)
class PlanSlice:
    """The slots of one model on one eval set, with the identity of the plan they come from."""

    model: str
    evalset: str
    rows: tuple[dict[str, Any], ...]
    plan_sha256: str
    plan_version: int

    @property
    def tasks(self) -> list[str]:
        """Planned task ids in plan order."""
        return list(dict.fromkeys(r["instance_id"] for r in self.rows))

    @property
    def samples(self) -> int:
        return max(r["sample"] for r in self.rows) + 1

    @property
    def slots(self) -> list[tuple[str, int]]:
        return [(r["instance_id"], r["sample"]) for r in self.rows]

    @property
    def sha256(self) -> str:
        """Identity of the slice alone: a plan change elsewhere leaves it (and its attempts)."""
        return content_sha256(self.rows)

    def first(self, key: str) -> Any:
        return self.rows[0][key]


def read_slice(plan_path: str | Path, model: str, evalset: str) -> PlanSlice:
    """The rows of ``model`` on ``evalset``; an error names the plan file when there are none."""
    plan_path = Path(plan_path)
    table = pq.read_table(plan_path)
    meta = table.schema.metadata or {}
    if META_SHA not in meta:
        raise PlanError(f"{plan_path}: no plan hash in the Parquet metadata")
    mask = pc.and_(pc.equal(table["model"], model), pc.equal(table["evalset"], evalset))
    rows = tuple(table.filter(mask).to_pylist())
    if not rows:
        raise PlanError(f"{plan_path}: no slots planned for model {model} on eval set {evalset}")
    keys = [(r["instance_id"], r["sample"]) for r in rows]
    if len(set(keys)) != len(keys):
        raise PlanError(f"{plan_path}: a slot of {model}/{evalset} is planned twice")
    return PlanSlice(model, evalset, rows, meta[META_SHA].decode(), int(meta[META_VERSION]))
