"""Template contexts of the paper's tables, built from result records (plain dicts from JSON).

Pure functions: each takes the parsed result files (the records of
:mod:`editcredit.stats.records` for the statistics) and returns the rows a template prints, typed
below. The templates format numbers (filters of :mod:`editcredit.report.latex`); nothing here
rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from editcredit.layout import is_run, parse_run
from editcredit.stats.records import (
    CIRecord,
    ComparisonRecord,
    EvalsetScores,
    FailureBucket,
    GatedRecord,
    GateRecord,
    PartRecord,
    ScoreSummary,
    TrainingRecord,
)

__all__ = [
    "audit_exclusions",
    "audits_context",
    "comparisons_context",
    "credit_context",
    "encounter_context",
    "failures_context",
    "health_context",
    "scores_context",
    "suite_context",
    "trained_context",
    "unresolved_context",
]

#: A record read from JSON whose shape the report takes as it comes (audits, control summaries,
#: the replay summary, slot rows).
Record = Mapping[str, Any]


class SuiteRow(TypedDict):
    """One suite of the suite table."""

    suite: str
    tasks: int
    train: int  # tasks by split
    dev: int
    holdout: int
    gold_1: int | None  # gold patches that resolve
    empty_0: int | None  # empty trees that do not
    flagged: int  # tasks the controls flagged (kept out of training)
    pool: int  # tasks in the training pool
    deviations: dict[str, int]  # control deviations by reason


class FailureGroup(TypedDict):
    """One arm's failure rates per step bucket."""

    arm: str
    buckets: list[FailureBucket]


class ScoreGroup(TypedDict):
    """One eval set of the scores table."""

    evalset: str
    n_tasks: int
    n_samples: int
    rows: list[dict[str, Any]]  # per model: model, arm, seed, then its ScoreSummary
    any_unresolved: bool


class ComparisonRow(TypedDict):
    """A comparison's whole-set row: its difference, CIs and sign test (only name, part,
    n_tasks and empty when the comparison has no record)."""

    name: str
    part: str  # the eval set
    empty: bool  # no record
    n_seeds: NotRequired[int]
    n_tasks: int
    resolved: NotRequired[bool]
    difference: NotRequired[float | None]
    difference_lower: NotRequired[float]
    difference_upper: NotRequired[float]
    ci_seed_task: NotRequired[CIRecord | None]
    ci_task: NotRequired[CIRecord | None]
    single_seed: NotRequired[bool]
    wins: NotRequired[int | None]  # the sign test's counts (None when unresolved)
    losses: NotRequired[int | None]
    ties: NotRequired[int | None]
    p_value: NotRequired[float | None]


class ComparisonGroup(TypedDict):
    """One comparison of the comparisons table, with its gate."""

    name: str
    label: str
    kind: str
    single_seed: bool
    evalset: str
    seeds: list[int]
    gate: GateRecord
    main: ComparisonRow


class PartRow(TypedDict):
    """One part (trained / untrained) of a comparison; the difference only when not empty."""

    part: str
    n_tasks: int
    n_cells: int
    tasks_by_seed: dict[str, int]  # in the comparison's seed order
    empty: bool
    resolved: NotRequired[bool]
    n_seeds: NotRequired[int]
    difference: NotRequired[float | None]
    difference_lower: NotRequired[float]
    difference_upper: NotRequired[float]
    ci: NotRequired[CIRecord | None]
    wins: NotRequired[int | None]
    losses: NotRequired[int | None]
    ties: NotRequired[int | None]


class TrainedGroup(TypedDict):
    """One comparison of the trained / untrained table."""

    name: str
    label: str
    evalset: str
    seeds: list[int]
    parts: list[PartRow]  # trained, then untrained
    partly_trained: int  # cells in neither part


class UnresolvedRow(TypedDict):
    """One unresolved slot of the appendix table."""

    model: str
    evalset: str
    instance_id: str
    sample: int
    reason: str  # "unknown" when the slot gives none
    detail: str  # the deciding attempt's reason ("" in older slot files)
    attempts: int | None


class AuditRow(TypedDict):
    """One audited checkpoint."""

    run: str
    step: int
    ok: bool
    failures: list[str]
    compared_tensors: int | None  # against the base
    changed_tensors: int | None
    compared_elements: int | None
    changed_elements: int | None
    relative_change: float | None  # None when not finite
    prev_changed_tensors: int | None  # against the previous checkpoint
    dtype_differences: int
    complete: bool  # no missing keys, no shape mismatches
    nonfinite: Any  # the checkpoint's non-finite count, as the audit wrote it
    excluded: int  # tensors the declared exclusions took


class ExclusionRow(TypedDict):
    """One declared exclusion (config ``audit.exclude``) the audits applied."""

    pattern: str
    reason: str
    tensors: NotRequired[int]  # the most tensors it took in any audit


class ReplayRow(TypedDict):
    """The replay check of stored gradings, as the paper states it."""

    stored: int
    replayable: int
    excluded: list[str]  # "{n} {why}" per reason a stored grading cannot be replayed
    sampled: int
    identical: int
    trees: int  # trees graded
    final: int  # sampled final gradings
    counterfactual: int  # sampled counterfactual gradings
    stored_final: int
    stored_counterfactual: int
    fraction: float
    minimum: int
    image_id: str  # the grader image ("" when not recorded)
    graders_changed: int  # segments whose grader changed


def suite_context(summaries: Sequence[Record]) -> list[SuiteRow]:
    """One row per suite: tasks by split, control outcomes, flagged tasks, training pool."""
    rows: list[SuiteRow] = []
    for s in summaries:
        splits = s.get("by_split", {})
        rows.append(
            {
                "suite": s["suite"],
                "tasks": s["tasks"],
                "train": splits.get("train", 0),
                "dev": splits.get("dev", 0),
                "holdout": splits.get("holdout", 0),
                "gold_1": s.get("gold_1"),
                "empty_0": s.get("empty_0"),
                "flagged": s.get("flagged", 0),
                "pool": len(s.get("training_pool", [])),
                "deviations": dict(s.get("deviations_by_reason", {})),
            }
        )
    return rows


def health_context(training: Sequence[TrainingRecord]) -> list[dict[str, Any]]:
    """One row per arm: the pooled health summary of its runs."""
    return [
        {"arm": t["arm"], "runs": t["runs"], "masked_by_cause": {}, **t["health"]} for t in training
    ]


def failures_context(training: Sequence[TrainingRecord]) -> list[FailureGroup]:
    """One group per arm: failure rates per step bucket."""
    return [{"arm": t["arm"], "buckets": t["failures"]} for t in training]


def credit_context(training: Sequence[TrainingRecord]) -> list[dict[str, Any]]:
    """One row per arm: where its credit went (records written before the count existed
    show a dash)."""
    return [{"arm": t["arm"], **t.get("credit", {})} for t in training]


def encounter_context(training: Sequence[TrainingRecord]) -> list[dict[str, Any]]:
    """One row per (arm, k): the encounter effect."""
    return [{"arm": t["arm"], **e} for t in training for e in t["encounter"]]


def _model_row(model: str, s: ScoreSummary) -> dict[str, Any]:
    run = parse_run(model) if is_run(model) else None
    return {
        "model": model,
        "arm": run.arm if run else "base" if model == "base" else "",
        "seed": str(run.seed) if run else "",
        **s,
    }


def _model_key(model: str, arm_order: Sequence[str]) -> tuple[int, int, str]:
    if not is_run(model):
        return (-1, 0, model)
    run = parse_run(model)
    rank = arm_order.index(run.arm) if run.arm in arm_order else len(arm_order)
    return (rank, run.seed, model)


def scores_context(scores: Sequence[EvalsetScores], arm_order: Sequence[str]) -> list[ScoreGroup]:
    """One group per eval set; one row per model (base first, then by arm and seed)."""
    groups: list[ScoreGroup] = []
    for rec in scores:
        models = sorted(rec["models"], key=lambda m: _model_key(m, arm_order))
        groups.append(
            {
                "evalset": rec["evalset"],
                "n_tasks": rec["n_tasks"],
                "n_samples": rec["n_samples"],
                "rows": [_model_row(m, rec["models"][m]) for m in models],
                "any_unresolved": any(not rec["models"][m]["resolved"] for m in models),
            }
        )
    return groups


def _comparison_row(
    name: str, part: str, c: ComparisonRecord | None, n_tasks: int
) -> ComparisonRow:
    if c is None:
        return {"name": name, "part": part, "n_tasks": n_tasks, "empty": True}
    sign: Mapping[str, Any] = c.get("sign") or {}  # None while unresolved
    return {
        "name": name,
        "part": part,
        "empty": False,
        "n_seeds": c["n_seeds"],
        "n_tasks": c["n_tasks"],
        "resolved": c["resolved"],
        "difference": c["difference"],
        "difference_lower": c["difference_lower"],
        "difference_upper": c["difference_upper"],
        "ci_seed_task": c["ci_seed_task"],
        "ci_task": c["ci_task"],
        "single_seed": c["single_seed"],
        "wins": sign.get("wins"),
        "losses": sign.get("losses"),
        "ties": sign.get("ties"),
        "p_value": sign.get("p_value"),
    }


def comparisons_context(comparisons: Sequence[GatedRecord]) -> list[ComparisonGroup]:
    """One group per comparison: the whole eval set, with the gate."""
    groups: list[ComparisonGroup] = []
    for rec in comparisons:
        groups.append(
            {
                "name": rec["comparison"],
                "label": rec["label"],
                "kind": rec["kind"],
                "single_seed": rec["single_seed"],
                "evalset": rec["evalset"],
                "seeds": rec["seeds"],
                "gate": rec["gate"],
                "main": _comparison_row(
                    rec["comparison"], rec["evalset"], rec["all"], rec["n_tasks"]
                ),
            }
        )
    return groups


def _part_row(part: str, p: PartRecord, seeds: Sequence[Any]) -> PartRow:
    c = p.get("comparison")
    by_seed = p["tasks_by_seed"]  # JSON keys: the seeds as text, in any order
    row: PartRow = {
        "part": part,
        "n_tasks": p["n_tasks"],
        "n_cells": p["n_cells"],
        "tasks_by_seed": {str(s): by_seed[str(s)] for s in seeds},
        "empty": c is None,
    }
    if c is not None:
        row["resolved"] = c["resolved"]
        row["n_seeds"] = c["n_seeds"]
        row["difference"] = c["difference"]
        row["difference_lower"] = c["difference_lower"]
        row["difference_upper"] = c["difference_upper"]
        row["ci"] = c["ci"]
        row["wins"] = c["wins"]
        row["losses"] = c["losses"]
        row["ties"] = c["ties"]
    return row


def trained_context(comparisons: Sequence[GatedRecord]) -> list[TrainedGroup]:
    """One group per comparison: its difference on the tasks its runs trained on and on the
    tasks they never saw (``trained`` / ``untrained`` of the paired record), and the count of
    partly trained cells (in neither part)."""
    return [
        {
            "name": rec["comparison"],
            "label": rec["label"],
            "evalset": rec["evalset"],
            "seeds": rec["seeds"],
            "parts": [
                _part_row("trained", rec["trained"], rec["seeds"]),
                _part_row("untrained", rec["untrained"], rec["seeds"]),
            ],
            "partly_trained": rec["partly_trained"]["n_cells"],
        }
        for rec in comparisons
    ]


def unresolved_context(
    rows: Sequence[Record], model_order: Sequence[str] = ()
) -> list[UnresolvedRow]:
    """One row per unresolved slot (verdict null), by model (``model_order`` first, then by
    name), eval set, task and sample. ``detail`` is the deciding attempt's reason (the test
    statuses of an unresolved verdict); empty in slots files written before it was stored."""
    order = {m: i for i, m in enumerate(model_order)}

    def key(r: Record) -> tuple[int, str, str, str, int]:
        model = str(r["model"])
        return (order.get(model, len(order)), model, r["evalset"], r["instance_id"], r["sample"])

    out: list[UnresolvedRow] = []
    for r in sorted((r for r in rows if r["verdict"] is None), key=key):
        out.append(
            {
                "model": r["model"],
                "evalset": r["evalset"],
                "instance_id": r["instance_id"],
                "sample": int(r["sample"]),
                "reason": r.get("reason") or "unknown",
                "detail": r.get("detail") or "",
                "attempts": r.get("attempts"),
            }
        )
    return out


def _number(value: Any) -> float | None:
    """A finite float, or ``None`` (audits write non-finite floats as "nan", "inf")."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def _audit_row(run: str, step: int, a: Record) -> AuditRow:
    base = a.get("vs_base") or {}
    prev = a.get("vs_previous") or {}
    return {
        "run": run,
        "step": step,
        "ok": bool(a.get("ok", not a.get("failures"))),
        "failures": list(a.get("failures", [])),
        "compared_tensors": base.get("compared_tensors"),
        "changed_tensors": base.get("changed_tensors"),
        "compared_elements": base.get("compared_elements"),
        "changed_elements": base.get("changed_elements"),
        "relative_change": _number(base.get("relative_change")),
        "prev_changed_tensors": prev.get("changed_tensors") if prev else None,
        "dtype_differences": len(base.get("dtype_differences", [])),
        "complete": not base.get("missing_keys") and not base.get("shape_mismatches"),
        "nonfinite": a.get("checkpoint_nonfinite"),
        "excluded": sum(len(e["keys"]) for e in a.get("excluded", [])),
    }


def audit_exclusions(audits: Mapping[tuple[str, int], Record]) -> list[ExclusionRow]:
    """The declared exclusions (config ``audit.exclude``) the audits applied: one row per
    pattern and reason, with the most tensors it took in any audit, in declaration order."""
    out: dict[tuple[str, str], ExclusionRow] = {}
    for _, a in sorted(audits.items()):
        for e in a.get("excluded", []):
            row = out.setdefault(
                (e["pattern"], e["reason"]), {"pattern": e["pattern"], "reason": e["reason"]}
            )
            row["tensors"] = max(row.get("tensors", 0), len(e["keys"]))
    return list(out.values())


def audits_context(
    audits: Mapping[tuple[str, int], Record], run_order: Sequence[str]
) -> list[AuditRow]:
    """One row per audited checkpoint, by run (plan order) then step."""

    def key(item: tuple[tuple[str, int], Record]) -> tuple[int, int]:
        (run, step), _ = item
        return (run_order.index(run) if run in run_order else len(run_order), step)

    return [_audit_row(run, step, a) for (run, step), a in sorted(audits.items(), key=key)]


_UNREPLAYABLE = {
    "empty_patch": "empty patches (graded without a run)",
    "infrastructure_failure": "infrastructure failures (no statuses)",
}


def replay_context(summary: Record) -> ReplayRow:
    """The replay check's summary (``results/replay/summary.json``) as the paper states it."""
    kinds = summary.get("sampled_by_kind", {})
    stored = summary.get("stored_by_kind", {})
    changed = [g for g in summary.get("segment_graders", []) if g.get("changes")]
    return {
        "stored": summary["stored"],
        "replayable": summary["replayable"],
        "excluded": [
            f"{n} {_UNREPLAYABLE.get(why, why)}"
            for why, n in sorted(summary.get("excluded", {}).items())
        ],
        "sampled": summary["sampled"],
        "identical": summary["identical"],
        "trees": summary["trees_graded"],
        "final": kinds.get("final", 0),
        "counterfactual": kinds.get("counterfactual", 0),
        "stored_final": stored.get("final", 0),
        "stored_counterfactual": stored.get("counterfactual", 0),
        "fraction": summary["fraction"],
        "minimum": summary["minimum"],
        "image_id": summary.get("grader", {}).get("image_id") or "",
        "graders_changed": len(changed),
    }
