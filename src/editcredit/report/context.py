"""Template contexts of the paper's tables, built from result records (plain dicts from JSON).

Pure functions: each takes the parsed result files and returns the rows a template prints. The
templates format numbers (filters of :mod:`editcredit.report.latex`); nothing here rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from editcredit.layout import is_run, parse_run

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

Record = Mapping[str, Any]


def suite_context(summaries: Sequence[Record]) -> list[dict[str, Any]]:
    """One row per suite: tasks by split, control outcomes, flagged tasks, training pool."""
    rows = []
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


def health_context(training: Sequence[Record]) -> list[dict[str, Any]]:
    """One row per arm: the pooled health summary of its runs."""
    return [
        {"arm": t["arm"], "runs": t["runs"], "masked_by_cause": {}, **t["health"]} for t in training
    ]


def failures_context(training: Sequence[Record]) -> list[dict[str, Any]]:
    """One group per arm: failure rates per step bucket."""
    return [{"arm": t["arm"], "buckets": t["failures"]} for t in training]


def credit_context(training: Sequence[Record]) -> list[dict[str, Any]]:
    """One row per arm: where its credit went (records written before the count existed
    show a dash)."""
    return [{"arm": t["arm"], **t.get("credit", {})} for t in training]


def encounter_context(training: Sequence[Record]) -> list[dict[str, Any]]:
    """One row per (arm, k): the encounter effect."""
    return [{"arm": t["arm"], **e} for t in training for e in t["encounter"]]


def _model_row(model: str, s: Record) -> dict[str, Any]:
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


def scores_context(scores: Sequence[Record], arm_order: Sequence[str]) -> list[dict[str, Any]]:
    """One group per eval set; one row per model (base first, then by arm and seed)."""
    groups = []
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


def _comparison_row(name: str, part: str, c: Record | None, n_tasks: int) -> dict[str, Any]:
    if c is None:
        return {"name": name, "part": part, "n_tasks": n_tasks, "empty": True}
    sign = c.get("sign") or {}
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


def comparisons_context(comparisons: Sequence[Record]) -> list[dict[str, Any]]:
    """One group per comparison: the whole eval set, with the gate."""
    groups = []
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


def _part_row(part: str, p: Record, seeds: Sequence[Any]) -> dict[str, Any]:
    c = p.get("comparison")
    by_seed = p["tasks_by_seed"]  # JSON keys: the seeds as text, in any order
    row = {
        "part": part,
        "n_tasks": p["n_tasks"],
        "n_cells": p["n_cells"],
        "tasks_by_seed": {str(s): by_seed[str(s)] for s in seeds},
        "empty": c is None,
    }
    if c is not None:
        row.update(
            resolved=c["resolved"],
            n_seeds=c["n_seeds"],
            difference=c["difference"],
            difference_lower=c["difference_lower"],
            difference_upper=c["difference_upper"],
            ci=c["ci"],
            wins=c["wins"],
            losses=c["losses"],
            ties=c["ties"],
        )
    return row


def trained_context(comparisons: Sequence[Record]) -> list[dict[str, Any]]:
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
) -> list[dict[str, Any]]:
    """One row per unresolved slot (verdict null), by model (``model_order`` first, then by
    name), eval set, task and sample. ``detail`` is the deciding attempt's reason (the test
    statuses of an unresolved verdict); empty in slots files written before it was stored."""
    order = {m: i for i, m in enumerate(model_order)}

    def key(r: Record) -> tuple[int, str, str, str, int]:
        model = str(r["model"])
        return (order.get(model, len(order)), model, r["evalset"], r["instance_id"], r["sample"])

    out = []
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


def _audit_row(run: str, step: int, a: Record) -> dict[str, Any]:
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


def audit_exclusions(audits: Mapping[tuple[str, int], Record]) -> list[dict[str, Any]]:
    """The declared exclusions (config ``audit.exclude``) the audits applied: one row per
    pattern and reason, with the most tensors it took in any audit, in declaration order."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for _, a in sorted(audits.items()):
        for e in a.get("excluded", []):
            row = out.setdefault(
                (e["pattern"], e["reason"]), {"pattern": e["pattern"], "reason": e["reason"]}
            )
            row["tensors"] = max(row.get("tensors", 0), len(e["keys"]))
    return list(out.values())


def audits_context(
    audits: Mapping[tuple[str, int], Record], run_order: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per audited checkpoint, by run (plan order) then step."""

    def key(item: tuple[tuple[str, int], Record]) -> tuple[int, int]:
        (run, step), _ = item
        return (run_order.index(run) if run in run_order else len(run_order), step)

    return [_audit_row(run, step, a) for (run, step), a in sorted(audits.items(), key=key)]


_UNREPLAYABLE = {
    "empty_patch": "empty patches (graded without a run)",
    "infrastructure_failure": "infrastructure failures (no statuses)",
}


def replay_context(summary: Record) -> dict[str, Any]:
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
