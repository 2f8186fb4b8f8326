"""A slot file stores an attempt without what the clock, the run's sentinels or the machine
decide; those facts go to the job's volatile sidecar (``slots.volatile.json``)."""

from __future__ import annotations

import json

from record_shapes import assert_record

from editcredit.evaluation.slots import Attempt, AttemptTimes, stored_attempt


def _attempt(**kw) -> Attempt:
    base = dict(
        instance_id="t",
        sample=1,
        index=2,
        kind="grade",
        outcome="report",
        of=1,
        started="2026-12-01T00:00:00.000+00:00",
        finished="2026-12-01T00:00:03.250+00:00",
        seconds=3.25,
    )
    return Attempt(**{**base, **kw})


SANDBOX = {
    "run_status": "finished",
    "seconds": 2.5,
    "timings": {"setup": 0.5, "run": 2.0},
    "sentinels": {"test_zq81.py::test_must_fail_77": "must_fail"},
    "sentinel_items": [],
    "timeouts": [],
    "observed": {"started": True, "finished": True, "items": 3, "collect_errors": 0},
    "log_tail": (
        "3 passed, 1 failed in 0.41s\n/tmp/tmpab12cd34/x.py:3 test_zq81.py::test_must_fail_77"
    ),
}


def test_a_graded_attempt_is_stored_without_times_and_with_a_stable_log_tail():
    body, volatile = stored_attempt(_attempt(report={"resolved": 1, "sandbox": SANDBOX}))
    assert not {"started", "finished", "seconds"} & set(body)
    sandbox = body["report"]["sandbox"]
    assert "seconds" not in sandbox and "timings" not in sandbox
    assert "observations" not in sandbox and sandbox["observed"]["items"] == 3
    assert sandbox["log_tail"] == ("3 passed, 1 failed in <t>s\n<tmp>/x.py:3 <sentinel:must_fail>")
    assert "0.41" not in json.dumps(body) and "zq81" not in json.dumps(body)
    assert volatile == {
        "instance_id": "t",
        "sample": 1,
        "index": 2,
        "started": "2026-12-01T00:00:00.000+00:00",
        "finished": "2026-12-01T00:00:03.250+00:00",
        "seconds": 3.25,
        "sandbox_seconds": 2.5,
        "sandbox_timings": {"setup": 0.5, "run": 2.0},
    }
    assert_record(volatile, AttemptTimes)


def test_an_infrastructure_failure_keeps_its_evidence_without_its_clock():
    evidence = {"run_status": "timeout", "log_tail": "killed after 30.02 seconds", "seconds": 30.1}
    body, volatile = stored_attempt(_attempt(outcome="infra_failure", evidence=evidence))
    assert body["evidence"] == {"run_status": "timeout", "log_tail": "killed after <t>s"}
    assert volatile["evidence_seconds"] == 30.1
    assert_record(volatile, AttemptTimes)
    # two runs that differ only in their clock store the same body
    other = {**evidence, "log_tail": "killed after 30.71 seconds", "seconds": 30.8}
    again, _ = stored_attempt(
        _attempt(outcome="infra_failure", evidence=other, started="x", finished="y", seconds=9.0)
    )
    assert again == body
