"""Gold and empty controls per task (METHOD §7): gold must score 1, the base tree 0.

A multi-bug task (``Task.bugs``) adds a per-bug control for each bug: its gold fix alone (the
other bugs left in) must pass that bug's FAIL_TO_PASS ids and PASS_TO_PASS, and fail the other
bugs' FAIL_TO_PASS ids, so each bug's tests are its own. Single-bug tasks' records are as before.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NotRequired, TypedDict

from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, grade_tree, judge_run
from editcredit.sandbox.base import Sandbox

EXPECTED = {"gold": 1, "empty": 0}


class BugControl(TypedDict):
    """One bug's control of a multi-bug task: its gold fix alone, graded."""

    function: str  # the function the bug is planted in
    report: dict[str, Any]  # its grading report (GradingReport as JSON)


class _ControlCore(TypedDict):
    instance_id: str
    task_sha256: str
    split: str
    gold: dict[str, Any]  # the gold patch's grading report (GradingReport as JSON)
    empty: dict[str, Any]  # the base tree's (no patch, tests run)


class ControlRecord(_ControlCore):
    """The controls of one task (``results/controls/{suite}/tasks/{id}.json``, less its
    provenance)."""

    bugs: NotRequired[list[BugControl]]  # multi-bug tasks only
    flagged: bool  # a control deviated
    deviations: list[str]  # why, one line each


class ControlsSummary(TypedDict):
    """The counts of one suite's controls (``results/controls/{suite}/summary.json``)."""

    multi_bug_tasks: NotRequired[int]  # suites with multi-bug tasks only (these three)
    bug_controls: NotRequired[int]  # per-bug controls run
    bug_controls_ok: NotRequired[int]  # ... without a deviation
    suite: str
    tasks: int
    gold_1: int  # gold patches that resolve
    empty_0: int  # base trees that do not
    flagged: int
    flagged_ids: list[str]  # sorted
    deviations_by_reason: dict[str, int]  # by the part before " (", sorted
    by_split: dict[str, int]  # tasks by split, sorted
    training_pool: NotRequired[list[str]]  # the tasks eligible for training (the job adds it)


def deviation(kind: str, report: GradingReport) -> str | None:
    """Why a control deviates from its expected verdict, or None."""
    if report.outcome == "infrastructure_failure":
        return f"{kind}: infrastructure failure"
    if report.resolved == EXPECTED[kind]:
        return None
    if report.resolved is None:
        return f"{kind}: unresolved"
    return f"{kind}: scored {report.resolved}, expected {EXPECTED[kind]}"


def bug_control_expectation(task: Task, index: int) -> dict[str, str]:
    """Expected status of every graded id when bug ``index`` alone is fixed: ``passed`` for
    its FAIL_TO_PASS ids and PASS_TO_PASS, ``failed`` for the other bugs' FAIL_TO_PASS ids."""
    if not task.bugs:
        raise ValueError(f"{task.instance_id}: not a multi-bug task")
    own = set(task.bugs[index].FAIL_TO_PASS)
    expected = {i: "passed" if i in own else "failed" for i in task.FAIL_TO_PASS}
    return expected | {i: "passed" for i in task.PASS_TO_PASS}


def bug_control_deviation(task: Task, index: int, statuses: dict[str, str]) -> str | None:
    """Why the run of bug ``index``'s fix alone deviates from its expectation (any status but
    ``passed`` counts as failing), or None."""
    bug = task.bugs[index] if task.bugs else None
    name = f"bug {index} ({bug.function})" if bug else f"bug {index}"
    wrong = sorted(
        i
        for i, want in bug_control_expectation(task, index).items()
        if (statuses.get(i) == "passed") != (want == "passed")
    )
    if not wrong:
        return None
    return f"{name}: {len(wrong)} tests off their expected status ({wrong[0]}, ...)"


def run_bug_controls(
    task: Task, sandbox: Sandbox, f_weight: float, g_weight: float
) -> tuple[list[BugControl], list[str]]:
    """The per-bug controls of a multi-bug task: each bug's report and the deviations."""
    records: list[BugControl] = []
    deviations: list[str] = []
    for index, bug in enumerate(task.bugs or ()):
        report = grade_tree(task, bug.patch, sandbox, f_weight, g_weight)
        found: str | None
        if report.outcome == "infrastructure_failure":
            found = f"bug {index} ({bug.function}): infrastructure failure"
        else:
            statuses = {i: t["status"] for i, t in report.tests.items()}
            found = bug_control_deviation(task, index, statuses)
        if found:
            deviations.append(found)
        records.append({"function": bug.function, "report": report.model_dump(mode="json")})
    return records, deviations


def run_controls(task: Task, sandbox: Sandbox, f_weight: float, g_weight: float) -> ControlRecord:
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
    core: _ControlCore = {
        "instance_id": task.instance_id,
        "task_sha256": task.sha256(),
        "split": task.split,
        "gold": reports["gold"].model_dump(mode="json"),
        "empty": reports["empty"].model_dump(mode="json"),
    }
    if not task.bugs:  # multi-bug tasks only have bugs: single-bug records keep their keys
        return {**core, "flagged": bool(deviations), "deviations": deviations}
    bugs, bug_deviations = run_bug_controls(task, sandbox, f_weight, g_weight)
    deviations += bug_deviations
    return {**core, "bugs": bugs, "flagged": bool(deviations), "deviations": deviations}


def summarize(controls: list[ControlRecord], suite: str) -> ControlsSummary:
    """Counts for the suite; flagged tasks listed (kept out of training pools, not eval)."""
    reasons = Counter(d.split(" (")[0] for c in controls for d in c["deviations"])
    flagged = sorted(c["instance_id"] for c in controls if c["flagged"])
    multi = [c for c in controls if "bugs" in c]
    counts: ControlsSummary = {
        "suite": suite,
        "tasks": len(controls),
        "gold_1": sum(c["gold"]["resolved"] == 1 for c in controls),
        "empty_0": sum(c["empty"]["resolved"] == 0 for c in controls),
        "flagged": len(flagged),
        "flagged_ids": flagged,
        "deviations_by_reason": dict(sorted(reasons.items())),
        "by_split": dict(sorted(Counter(c["split"] for c in controls).items())),
    }
    if not multi:  # suites with multi-bug tasks only: the others' summaries keep their keys
        return counts
    return {
        "multi_bug_tasks": len(multi),
        "bug_controls": sum(len(c["bugs"]) for c in multi),
        "bug_controls_ok": sum(
            not any(d.startswith(f"bug {k} (") for d in c["deviations"])
            for c in multi
            for k in range(len(c["bugs"]))
        ),
        **counts,
    }


def training_pool(
    task_ids: list[str], summary: ControlsSummary, exclude_flagged: bool
) -> list[str]:
    """Task ids eligible for training: flagged ones removed when the config says so."""
    flagged = set(summary["flagged_ids"]) if exclude_flagged else set()
    return [t for t in task_ids if t not in flagged]
