"""Hostile patches in the real docker sandbox: loops are the patch's failures, forgeries of
pytest's reports from inside the test process are tampering, nothing scores a valid 1."""

from __future__ import annotations

import uuid

import pytest
from hostilefactory import (
    FORGERIES,
    LOOP_AT_IMPORT,
    LOOP_IN_CALLED_CODE,
    LOOP_IN_FIXTURE,
    PRIMES_BUG,
    PRIMES_FIXED,
    forgery_patches,
    loop_patches,
    make_primes_task,
    signal_server_patch,
)
from taskfactory import CONFIG, WEIGHTS

from editcredit.agent.reward import terminal_reward
from editcredit.grading.controls import run_controls
from editcredit.grading.grader import grade_patch
from editcredit.grading.verdicts import judge
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

IDS = {*make_primes_task().FAIL_TO_PASS, *make_primes_task().PASS_TO_PASS}
#: small floors keep the loops short; the mechanism is the same at the defaults
LIMITS = {"floor_s": 1.5, "collect_floor_s": 3.0, "max_timeouts": 2}

#: routes the observer's integrity checks name as tampering; the other one is undone by the
#: runner (it writes the records it received itself) and ends unresolved for want of evidence
TAMPERING = set(FORGERIES) - {"observation and done files overwritten"}
#: refused whether or not the forgery reached the records (here the trace function rewrites
#: longrepr but not outcome; the shim plugin loses the collection)
NOT_SHOWN_EFFECTIVE = {
    "trace function rewriting pytest's locals",
    "pytest's python plugin unregistered (tests pass without running)",
}


@pytest.fixture(scope="module")
def hostile_box(docker_ready):
    box = make_sandbox("docker", {**CONFIG["sandbox"], "test_limits": LIMITS})
    yield box
    server = box._server
    box.close()
    with pytest.raises(Exception, match="[Nn]o such container|404"):
        box._client.containers.get(server.id)


@pytest.fixture(scope="module")
def primes_task():
    return make_primes_task()


def test_controls_and_sentinels_stay_out_of_counts(hostile_box, primes_task):
    gold = grade_patch(primes_task, primes_task.patch, hostile_box, *WEIGHTS)
    assert (gold.verdict, gold.resolved, gold.tampering) == ("valid_1", 1, False)
    assert set(gold.tests) == {*primes_task.FAIL_TO_PASS, *primes_task.PASS_TO_PASS}
    run = gold.sandbox
    roles = sorted(run.sentinels.values())
    assert roles == ["must_fail", "must_pass"]
    assert not {i.nodeid for i in run.observations.items} & set(run.sentinels)
    assert {i.nodeid for i in run.sentinel_items} == set(run.sentinels)
    again = grade_patch(primes_task, primes_task.patch, hostile_box, *WEIGHTS)
    assert not set(again.sandbox.sentinels) & set(run.sentinels), "names are per run"
    bug = grade_patch(primes_task, diff_trees({}, {"notes.txt": "x\n"}), hostile_box, *WEIGHTS)
    assert (bug.verdict, bug.resolved, bug.tampering) == ("valid_0", 0, False)


@pytest.mark.parametrize("route", sorted(FORGERIES))
def test_forgery_from_inside_the_test_process_never_scores_1(hostile_box, primes_task, route):
    report = grade_patch(primes_task, forgery_patches()[route], hostile_box, *WEIGHTS)
    assert report.outcome == "verdict", report.reason
    assert report.resolved != 1 and report.verdict == "unresolved", report.reason
    assert report.tampering == (route in TAMPERING), report.reason
    # the forgery worked on the records: judged by its items alone it would be a valid 1
    items = report.sandbox.observations.items
    raw = judge(primes_task.FAIL_TO_PASS, primes_task.PASS_TO_PASS, items)
    if route not in NOT_SHOWN_EFFECTIVE:
        assert raw.kind == ("valid_1" if route in TAMPERING else "unresolved")
    if report.tampering:
        assert report.reason.startswith("tampering:")
        reward = terminal_reward(report, format_error=False, **CONFIG["reward"])
        assert (reward.reward, reward.masked, reward.Y) == (-0.5, False, 0)


def test_loop_in_called_code_is_a_valid_0_with_a_timeout(hostile_box, primes_task):
    report = grade_patch(primes_task, loop_patches()[LOOP_IN_CALLED_CODE], hostile_box, *WEIGHTS)
    assert (report.outcome, report.verdict, report.resolved) == ("verdict", "valid_0", 0)
    assert "timeout" in report.reason
    assert report.tests["test_primes.py::test_is_prime"]["status"] == "timeout"
    assert report.tests["test_primes.py::test_sum_of_multiples"]["status"] == "passed"
    timeouts = report.sandbox.timeouts
    assert timeouts and all(t.reproduced for t in timeouts)
    # a loop is told by its CPU seconds, before its wall-clock limit
    assert all(t.limited_by == "cpu" and t.cpu_s >= t.cpu_limit_s for t in timeouts)
    reward = terminal_reward(report, format_error=False, **CONFIG["reward"])
    assert (reward.masked, reward.Y) == (False, 0)


def test_loop_in_a_fixture_is_a_valid_0_with_a_timeout(hostile_box, primes_task):
    report = grade_patch(primes_task, loop_patches()[LOOP_IN_FIXTURE], hostile_box, *WEIGHTS)
    assert (report.outcome, report.verdict) == ("verdict", "valid_0"), report.reason
    assert report.tests["test_primes.py::test_small_primes"]["status"] == "timeout"
    # the run continued past the timed-out test: the tests after it were observed
    assert report.tests["test_primes.py::test_zero_factor"]["status"] == "passed"


def test_loop_at_import_is_a_valid_0_never_an_infrastructure_failure(hostile_box, primes_task):
    report = grade_patch(primes_task, loop_patches()[LOOP_AT_IMPORT], hostile_box, *WEIGHTS)
    assert (report.outcome, report.verdict, report.resolved) == ("verdict", "valid_0", 0)
    assert report.reason.startswith("timeout: collection")
    assert report.sandbox.collect_timeout.reproduced


def test_a_timeout_that_does_not_reproduce_alone_is_an_attempt_failure(hostile_box, primes_task):
    marker = f"/tmp/editcredit-once-{uuid.uuid4().hex}"
    once = PRIMES_FIXED.replace(
        "def is_prime(n):\n",
        "def is_prime(n):\n"
        "    import os\n"
        f"    if n == 97 and not os.path.exists({marker!r}):\n"
        f"        open({marker!r}, 'w').close()\n"
        "        while True:\n"
        "            pass\n",
    )
    report = grade_patch(
        primes_task,
        diff_trees({"primes.py": PRIMES_BUG}, {"primes.py": once}),
        hostile_box,
        *WEIGHTS,
    )
    assert report.outcome == "infrastructure_failure", report.reason
    assert "did not reproduce" in report.reason
    assert report.sandbox.timeouts[0].nodeid == "test_primes.py::test_is_prime"
    assert not report.sandbox.timeouts[0].reproduced
    assert terminal_reward(report, format_error=False, **CONFIG["reward"]).masked


def test_the_grading_server_cannot_be_stopped_from_inside(hostile_box, primes_task):
    report = grade_patch(primes_task, signal_server_patch(), hostile_box, *WEIGHTS)
    assert (report.outcome, report.verdict) == ("verdict", "valid_0"), report.reason
    assert grade_patch(primes_task, primes_task.patch, hostile_box, *WEIGHTS).resolved == 1


def test_a_suites_own_tracer_and_monkeypatching_are_not_tampering(hostile_box, primes_task):
    """Tracers and monkeypatches from the frozen test files are the task's, not the patch's."""
    tests = primes_task.files["test_primes.py"] + (
        "\n\ndef test_traced(monkeypatch):\n"
        "    import json, sys\n"
        "    monkeypatch.setattr(json, 'dumps', lambda *a, **k: 'x')\n"
        "    sys.settrace(lambda *a: None)\n"
        "    assert json.dumps(1) == 'x'\n"
    )
    task = primes_task.model_copy(update={"files": {**primes_task.files, "test_primes.py": tests}})
    report = grade_patch(task, task.patch, hostile_box, *WEIGHTS)
    assert (report.verdict, report.tampering) == ("valid_1", False), report.reason


def test_the_gold_control_records_the_times_the_limits_come_from(docker_ready, primes_task):
    with make_sandbox("docker", {**CONFIG["sandbox"], "test_limits": LIMITS}) as box:
        control = run_controls(primes_task, box, *WEIGHTS)
        timings = control["gold"]["sandbox"]["timings"]
        assert set(timings["tests"]) == set(IDS) and timings["collect_s"] > 0
        assert control["gold"]["sandbox"]["limits"] is None  # the gold run is not held to them
        assert not control["flagged"], control["deviations"]
        # the empty control (and every later grading) is held to limits from those times
        times = load_gold_times_from([control])
        assert box.gold_times.get(primes_task.instance_id) == times[primes_task.instance_id]
        assert control["empty"]["sandbox"]["limits"]["gold_timed"]


def load_gold_times_from(controls):
    import json
    import tempfile
    from pathlib import Path

    from editcredit.sandbox.limits import load_gold_times

    with tempfile.TemporaryDirectory() as tmp:
        for c in controls:
            Path(tmp, f"{c['instance_id']}.json").write_text(json.dumps(c))
        return load_gold_times(tmp)
