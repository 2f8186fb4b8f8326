"""Gold and empty controls per task (METHOD §7): gold must score 1, the base tree 0."""

from __future__ import annotations

from collections import Counter
from typing import Any

from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, grade_tree, judge_run
from editcredit.sandbox.base import Sandbox

EXPECTED = {"gold": 1, "empty": 0}


def deviation(kind: str, report: GradingReport) -> str | None:
    """Why a control deviates from its expected verdict, or None."""
    if report.outcome == "infrastructure_failure":
        return f"{kind}: infrastructure failure"
    if report.resolved == EXPECTED[kind]:
        return None
    if report.resolved is None:
        return f"{kind}: unresolved"
    return f"{kind}: scored {report.resolved}, expected {EXPECTED[kind]}"


def run_controls(task: Task, sandbox: Sandbox, f_weight: float, g_weight: float) -> dict[str, Any]:
    """Grade the gold patch and the base tree (no patch, tests run); flag deviations. The
    utility weights are config ``grading.f_weight`` and ``grading.g_weight`` (METHOD §3).

    The gold run is held to the task's whole-run limit only and records the task's gold-run
    times (``gold.sandbox.timings``: collection and per-test seconds, read back by
    :func:`editcredit.sandbox.limits.load_gold_times`); the empty control already runs under
    the per-test limits derived from them."""
    reports = {
        "gold": judge_run(task, task.patch, sandbox.measure_gold(task), f_weight, g_weight),
        "empty": grade_tree(task, "", sandbox, f_weight, g_weight),
    }
    deviations = [d for kind, r in reports.items() if (d := deviation(kind, r))]
    return {
        "instance_id": task.instance_id,
        "task_sha256": task.sha256(),
        "split": task.split,
        "gold": reports["gold"].model_dump(mode="json"),
        "empty": reports["empty"].model_dump(mode="json"),
        "flagged": bool(deviations),
        "deviations": deviations,
    }


def summarize(controls: list[dict[str, Any]], suite: str) -> dict[str, Any]:
    """Counts for the suite; flagged tasks listed (kept out of training pools, not eval)."""
    reasons = Counter(d.split(" (")[0] for c in controls for d in c["deviations"])
    flagged = sorted(c["instance_id"] for c in controls if c["flagged"])
    return {
        "suite": suite,
        "tasks": len(controls),
        "gold_1": sum(c["gold"]["resolved"] == 1 for c in controls),
        "empty_0": sum(c["empty"]["resolved"] == 0 for c in controls),
        "flagged": len(flagged),
        "flagged_ids": flagged,
        "deviations_by_reason": dict(sorted(reasons.items())),
        "by_split": dict(sorted(Counter(c["split"] for c in controls).items())),
    }


def training_pool(task_ids: list[str], summary: dict[str, Any], exclude_flagged: bool) -> list[str]:
    """Task ids eligible for training: flagged ones removed when the config says so."""
    flagged = set(summary["flagged_ids"]) if exclude_flagged else set()
    return [t for t in task_ids if t not in flagged]
