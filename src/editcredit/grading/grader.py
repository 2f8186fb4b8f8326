"""Grade a patch on a task: the sandbox observes, this module judges (METHOD §6)."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from editcredit.data.task import Task
from editcredit.grading.utility import training_score
from editcredit.grading.verdicts import judge
from editcredit.sandbox.base import Sandbox, SandboxReport, grade_selected

ReportVerdict = Literal["valid_1", "valid_0", "unresolved", "empty_patch", "patch_does_not_apply"]


class GradingReport(BaseModel):
    """The grading record of one (task, patch).

    ``outcome`` is ``verdict`` when the run produced one, or ``infrastructure_failure`` (the
    sandbox died, timed out, or wrote no report): an attempt failure, never a score.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    patch_sha256: str
    outcome: Literal["verdict", "infrastructure_failure"]
    verdict: ReportVerdict | None
    resolved: int | None
    reason: str
    Y: int | None = None
    F: float | None = None
    G: int | None = None
    U: float | None = None
    tests: dict[str, dict[str, Any]] = {}
    dropped_paths: list[str] = []
    sandbox: SandboxReport | None = None


def is_empty_patch(patch: str) -> bool:
    return not patch.strip()


def grade_patch(
    task: Task, patch: str, sandbox: Sandbox, f_weight: float = 0.25, g_weight: float = 0.25
) -> GradingReport:
    """Empty patch: valid 0 without running anything. Otherwise run and judge."""
    if is_empty_patch(patch):
        return GradingReport(
            **_identity(task, patch),
            outcome="verdict",
            verdict="empty_patch",
            resolved=0,
            reason="empty patch: nothing to grade",
            Y=0,
            F=0.0,
            G=0,
            U=0.0,
        )
    return grade_tree(task, patch, sandbox, f_weight, g_weight)


def _identity(task: Task, patch: str) -> dict[str, str]:
    digest = hashlib.sha256(patch.encode("utf-8")).hexdigest()
    return {"instance_id": task.instance_id, "patch_sha256": digest}


def grade_tree(
    task: Task,
    patch: str,
    sandbox: Sandbox,
    f_weight: float = 0.25,
    g_weight: float = 0.25,
    select: list[str] | None = None,
) -> GradingReport:
    """Run the tests on the task's tree with ``patch`` applied (an empty patch runs the base
    tree: the empty control of METHOD §7) and judge the observations. ``select``: run only
    these node ids (the sandbox runs the task's test files otherwise)."""
    base = _identity(task, patch)
    run = grade_selected(sandbox, task, patch, select)
    if not run.patch_applied:
        return GradingReport(
            **base,
            outcome="verdict",
            verdict="patch_does_not_apply",
            resolved=0,
            reason=f"patch does not apply: {run.patch_error}",
            Y=0,
            F=0.0,
            G=0,
            U=0.0,
            dropped_paths=run.dropped_paths,
            sandbox=run,
        )
    if run.run_status != "finished":
        return GradingReport(
            **base,
            outcome="infrastructure_failure",
            verdict=None,
            resolved=None,
            reason=_infra_reason(run),
            dropped_paths=run.dropped_paths,
            sandbox=run,
        )
    verdict = judge(task.FAIL_TO_PASS, task.PASS_TO_PASS, run.observations.items)
    score = training_score(task.FAIL_TO_PASS, task.PASS_TO_PASS, verdict.tests, f_weight, g_weight)
    reason = verdict.reason
    if run.dropped_paths:
        reason += f" (dropped changes to protected paths: {', '.join(run.dropped_paths)})"
    return GradingReport(
        **base,
        outcome="verdict",
        verdict=verdict.kind,
        resolved=verdict.resolved,
        reason=reason,
        Y=score.Y,
        F=score.F,
        G=score.G,
        U=score.U,
        tests={
            i: {"status": t.status, "members": t.members, "xfail_not_run": t.xfail_not_run}
            for i, t in verdict.tests.items()
        },
        dropped_paths=run.dropped_paths,
        sandbox=run,
    )


def _infra_reason(run: SandboxReport) -> str:
    reasons = {
        "timeout": f"timeout: the test run exceeded its limit ({run.seconds:.1f}s elapsed)",
        "sandbox_died": "sandbox died before finishing",
        "no_report": "no report: the observer wrote no records",
    }
    return "infrastructure failure: " + reasons.get(run.run_status, run.run_status)
