"""Which runs give a verdict and which are attempt failures (METHOD §6), on synthetic sandbox
reports: the whole run past its limit, timeouts that did or did not reproduce alone, a
collection that timed out, a session that did not complete."""

from __future__ import annotations

import pytest
from taskfactory import WEIGHTS, make_calc_task

from editcredit.grading.grader import judge_run
from editcredit.sandbox.base import CollectTimeout, SandboxReport, TestTimeout
from editcredit.sandbox.observations import ItemObservation, Observations, PhaseRecord

TASK = make_calc_task()
IDS = [*TASK.FAIL_TO_PASS, *TASK.PASS_TO_PASS]
SENTINELS = {"s.py::a": "must_pass", "s.py::b": "must_fail"}


def item(nodeid, call="passed", teardown=True):
    phases = [PhaseRecord(when="setup", outcome="passed")]
    if call:
        phases.append(PhaseRecord(when="call", outcome=call))
    if call and teardown:
        phases.append(PhaseRecord(when="teardown", outcome="passed"))
    return ItemObservation(nodeid=nodeid, phases=phases)


def run(status="finished", items=None, timeouts=(), collect=None, gold_timed=True, **obs):
    observed = {"started": True, "finished": True, "returned": True, "machinery": "intact"}
    observed.update(obs)
    return SandboxReport(
        instance_id=TASK.instance_id,
        backend="test",
        isolation="",
        patch_applied=True,
        run_status=status,
        observations=Observations(
            items=[item(i) for i in IDS] if items is None else items, **observed
        ),
        seconds=1.0,
        sentinels=SENTINELS,
        sentinel_items=[item("s.py::a"), item("s.py::b", "failed")],
        timeouts=list(timeouts),
        collect_timeout=collect,
        limits={"gold_timed": gold_timed},
    )


ADD = "test_calc.py::test_add"
KILLED = [item(ADD, call=None)] + [item(i) for i in IDS[1:]]


def timeout(reproduced):
    return TestTimeout(nodeid=ADD, index=0, seconds=5.1, limit_s=5.0, reproduced=reproduced)


@pytest.mark.parametrize(
    "sandbox_run,outcome,verdict,cause,reason_part",
    [
        (run(), "verdict", "valid_1", "", "all expected"),
        (run(status="timeout"), "infrastructure_failure", None, "run_timeout", "exceeded"),
        (run(status="sandbox_died"), "infrastructure_failure", None, "sandbox_died", "died"),
        (run(items=KILLED, timeouts=[timeout(True)]), "verdict", "valid_0", "", "timeout"),
        (
            run(items=KILLED, timeouts=[timeout(False)]),
            "infrastructure_failure",
            None,
            "timeout_not_reproduced",
            "did not reproduce",
        ),
        (
            run(items=[], collect=CollectTimeout(seconds=10.5, limit_s=10, reproduced=True)),
            "verdict",
            "valid_0",
            "",
            "timeout: collection",
        ),
        (
            run(items=[], collect=CollectTimeout(seconds=10.5, limit_s=10, reproduced=False)),
            "infrastructure_failure",
            None,
            "collect_timeout_not_reproduced",
            "not on a rerun",
        ),
        # a collection hang with no gold collection time to hold it to is not the patch's
        (
            run(
                items=[],
                collect=CollectTimeout(seconds=10.5, limit_s=10, reproduced=True),
                gold_timed=False,
            ),
            "infrastructure_failure",
            None,
            "collect_timeout_without_gold_times",
            "gold run",
        ),
        # pytest did not return to the runner (an os._exit inside the tests): no 1
        (run(returned=False), "verdict", "unresolved", "", "incomplete"),
        (run(machinery="changed"), "verdict", "unresolved", "", "tampering"),
        (run(tampering=["x:y"]), "verdict", "unresolved", "", "tampering: changed x:y"),
    ],
)
def test_run_outcomes(sandbox_run, outcome, verdict, cause, reason_part):
    report = judge_run(TASK, TASK.patch, sandbox_run, *WEIGHTS)
    assert (report.outcome, report.verdict, report.infra_cause) == (outcome, verdict, cause)
    assert reason_part in report.reason
    assert report.tampering == reason_part.startswith("tampering")


def test_wrong_sentinel_is_tampering_and_sentinels_are_not_counted():
    bad = run().model_copy(update={"sentinel_items": [item("s.py::a"), item("s.py::b")]})
    report = judge_run(TASK, TASK.patch, bad, *WEIGHTS)
    assert report.tampering and "sentinel that must fail reported passed" in report.reason
    assert set(report.tests) == set(IDS)
    # nothing is read from forged reports
    assert (report.Y, report.F, report.G, report.U) == (None, None, None, None)


def test_y_is_1_only_for_a_valid_1():
    report = judge_run(TASK, TASK.patch, run(returned=False), *WEIGHTS)
    assert report.verdict == "unresolved"
    assert (report.Y, report.F, report.G, report.U) == (0, 1.0, 0, 0.25)
