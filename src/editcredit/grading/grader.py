"""Grade a patch on a task: the sandbox observes, this module judges (METHOD §6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from editcredit.data.task import Task
from editcredit.grading.utility import training_score
from editcredit.grading.verdicts import RunEvidence, VerdictKind, judge, sentinel_problems
from editcredit.io.hashing import sha256_text
from editcredit.sandbox.base import SandboxReport, grade_selected, observe_selected


class Grades(Protocol):
    """What the grader asks of a sandbox: a ``grade`` like
    :class:`~editcredit.sandbox.base.Sandbox`'s (a sandbox, a pool, or a wrapper that passes the
    call on: a memo, a counter)."""

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport: ...


ReportVerdict = Literal["valid_1", "valid_0", "unresolved", "empty_patch", "patch_does_not_apply"]


class GradingReport(BaseModel):
    """The grading record of one (task, patch).

    ``outcome`` is ``verdict`` when the run produced one, or ``infrastructure_failure`` (the
    sandbox died, the whole run exceeded its limit, no report, or a per-test or collection
    timeout that did not reproduce on a rerun alone): an attempt failure, never a score.
    ``tampering``: the verdict is unresolved because the test process's reports were forged
    (wrong sentinels, changed reporting machinery); training scores it as a format error and
    Y, F, G, U are None (nothing can be read from forged reports: a counterfactual query on it
    is unavailable). ``Y`` is 1 only for a ``valid_1`` verdict.
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
    tampering: bool = False
    infra_cause: str = ""
    sandbox: SandboxReport | None = None


def is_empty_patch(patch: str) -> bool:
    return not patch.strip()


def grade_patch(
    task: Task, patch: str, sandbox: Grades, f_weight: float, g_weight: float
) -> GradingReport:
    """Empty patch: valid 0 without running anything. Otherwise run and judge. The utility
    weights are config ``grading.f_weight`` and ``grading.g_weight`` (METHOD §3)."""
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
    digest = sha256_text(patch)
    return {"instance_id": task.instance_id, "patch_sha256": digest}


def grade_tree(
    task: Task,
    patch: str,
    sandbox: Grades,
    f_weight: float,
    g_weight: float,
    select: list[str] | None = None,
) -> GradingReport:
    """Run the tests on the task's tree with ``patch`` applied (an empty patch runs the base
    tree: the empty control of METHOD §7) and judge the observations. ``select``: run only
    these node ids (the sandbox runs the task's test files otherwise)."""
    run = grade_selected(sandbox, task, patch, select)
    return judge_run(task, patch, run, f_weight, g_weight)


def observe_tree(task: Task, patch: str, sandbox: Grades, select: list[str]) -> GradingReport:
    """The agent's own test run (the minibugs ``run`` action on its visible tests): the
    verdict and the per-test statuses, no training quantities (Y, F, G, U are None: nothing is
    trained or scored on an observation, so it needs no utility weights)."""
    return _judge(task, patch, observe_selected(sandbox, task, patch, select), None)


def judge_run(
    task: Task, patch: str, run: SandboxReport, f_weight: float, g_weight: float
) -> GradingReport:
    """The grading report of a sandbox run of ``patch`` on ``task``."""
    return _judge(task, patch, run, (f_weight, g_weight))


def _judge(
    task: Task, patch: str, run: SandboxReport, weights: tuple[float, float] | None
) -> GradingReport:
    """``judge_run``; ``weights`` None leaves the training quantities out."""
    base = _identity(task, patch)
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
    cause, infra = _infra_reason(run)
    if infra:
        return GradingReport(
            **base,
            outcome="infrastructure_failure",
            verdict=None,
            resolved=None,
            reason=infra,
            infra_cause=cause,
            dropped_paths=run.dropped_paths,
            sandbox=run,
        )
    obs = run.observations
    verdict = judge(
        task.FAIL_TO_PASS,
        task.PASS_TO_PASS,
        obs.items,
        evidence(run),
        task.test_runner,
        obs.aliases,
    )
    Y = F = G = U = None
    if weights is not None and not verdict.tampering:  # forged reports: nothing can be read
        score = training_score(task.FAIL_TO_PASS, task.PASS_TO_PASS, verdict.tests, *weights)
        if verdict.kind != VerdictKind.VALID_1 and score.Y:  # all expected passed, run incomplete
            score = replace(score, Y=0, U=score.U - 1)
        Y, F, G, U = score.Y, score.F, score.G, score.U
    reason = verdict.reason
    if run.dropped_paths:
        reason += f" (dropped changes to protected paths: {', '.join(run.dropped_paths)})"
    return GradingReport(
        **base,
        outcome="verdict",
        verdict=verdict.kind,
        resolved=verdict.resolved,
        reason=reason,
        Y=Y,
        F=F,
        G=G,
        U=U,
        tests={
            i: {"status": t.status, "members": t.members, "xfail_not_run": t.xfail_not_run}
            for i, t in verdict.tests.items()
        },
        dropped_paths=run.dropped_paths,
        tampering=verdict.tampering,
        sandbox=run,
    )


def evidence(run: SandboxReport) -> RunEvidence:
    """The run's evidence beyond its items: confirmed timeouts, completeness, integrity."""
    obs = run.observations
    complete = obs.finished and obs.returned
    tampering = [f"changed {what}" for what in dict.fromkeys(obs.tampering)]
    if obs.finished and obs.machinery == "changed" and not tampering:
        tampering.append("reporting machinery changed")
    if run.sentinels:
        tampering += sentinel_problems(run.sentinels, run.sentinel_items, complete)
    return RunEvidence(
        timed_out=frozenset(t.nodeid for t in run.timeouts if t.reproduced),
        collect_timeout=run.collect_timeout is not None and run.collect_timeout.reproduced,
        complete=complete,
        tampering=tuple(tampering[:8]),
    )


def _infra_reason(run: SandboxReport) -> tuple[str, str]:
    """(cause, reason) of a run that gave no verdict (('', '') when it did): it did not
    finish, or a timeout did not reproduce on a rerun alone (the slowness was not the
    patch's doing)."""
    if run.run_status == "finished":
        if run.collect_timeout is not None and not run.collect_timeout.reproduced:
            return "collect_timeout_not_reproduced", (
                "infrastructure failure: collection exceeded its limit "
                f"({run.collect_timeout.limit_s:g}s) but not on a rerun"
            )
        if run.collect_timeout is not None and not (run.limits or {}).get("gold_timed"):
            return "collect_timeout_without_gold_times", (
                "infrastructure failure: collection exceeded its limit, and the task's gold run "
                "gave no collection time to hold it to"
            )
        flaky = [t.nodeid for t in run.timeouts if not t.reproduced]
        if flaky:
            return "timeout_not_reproduced", (
                "infrastructure failure: per-test timeout that did not reproduce on a rerun "
                f"alone: {', '.join(flaky[:5])}"
            )
        return "", ""
    reasons = {
        "timeout": f"timeout: the test run exceeded its limit ({run.seconds:.1f}s elapsed)",
        "sandbox_died": "sandbox died before finishing",
        "no_report": "no report: the observer wrote no records",
    }
    cause = "run_timeout" if run.run_status == "timeout" else run.run_status
    return cause, "infrastructure failure: " + reasons.get(run.run_status, run.run_status)
