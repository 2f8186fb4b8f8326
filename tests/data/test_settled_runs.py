"""Suite validation does not depend on load: a run that did not finish is graded again with a
longer whole-run limit before anything is judged by it."""

from __future__ import annotations

import pytest
from taskfactory import make_calc_task

from editcredit.sandbox.base import SandboxReport
from editcredit.sandbox.observations import Observations
from editcredit.suites.minibugs import RETRY_FACTORS, settled_runs


def report(status: str, limit: float) -> SandboxReport:
    return SandboxReport(
        instance_id="t",
        backend="fake",
        isolation="none",
        patch_applied=True,
        run_status=status,
        observations=Observations(started=True, finished=status == "finished"),
        seconds=0.1,
        log_tail=str(limit),
    )


@pytest.mark.parametrize(
    ("needs", "limits_seen", "final"),
    [
        (5.0, [5.0], "finished"),  # fits the limit: graded once
        (12.0, [5.0, 20.0], "finished"),  # a slow machine: the first rung settles it
        (60.0, [5.0, 20.0, 80.0], "finished"),
        (1e9, [5.0, 20.0, 80.0], "timeout"),  # never finishes: judged by its last run
    ],
)
def test_a_run_that_did_not_finish_is_graded_again_with_longer_limits(needs, limits_seen, final):
    seen = []

    def grade_many(jobs):
        out = []
        for task, _patch in jobs:
            seen.append((task.instance_id, task.timeout_s))
            fits = task.instance_id == "quick" or task.timeout_s >= needs
            status = "finished" if fits else "timeout"
            out.append(report(status, task.timeout_s))
        return out

    quick = make_calc_task().model_copy(update={"instance_id": "quick", "timeout_s": 5.0})
    slow = make_calc_task().model_copy(update={"instance_id": "slow", "timeout_s": 5.0})
    runs = settled_runs(grade_many, [(quick, ""), (slow, "p")])
    assert RETRY_FACTORS == (4.0, 16.0)
    assert [t for i, t in seen if i == "slow"] == limits_seen
    assert runs[1].run_status == final and float(runs[1].log_tail) == limits_seen[-1]
    assert [t for i, t in seen if i == "quick"] == [5.0]  # a finished run is never redone
