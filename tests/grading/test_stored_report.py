"""The stored grading report: what a rerun changes (clock, nonce, temporary paths) is left out or
replaced by a fixed placeholder, and every fact a verdict uses is kept."""

from __future__ import annotations

import json

import pytest

from editcredit.grading.grader import GradingReport
from editcredit.grading.stored_report import stable_log_tail, stored_report
from editcredit.sandbox.base import SandboxReport, TestTimeout
from editcredit.sandbox.observations import ItemObservation, Observations, PhaseRecord

FAIL = "test_75283facbfbb.py::test_8227fb4e10ac"
PASS = "test_75283facbfbb.py::test_5da8dfd5a351"
SENTINELS = {FAIL: "must_fail", PASS: "must_pass"}
SECRET = "assert (13752509 * 6591125) == 90644505882626"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 failed, 6 passed in 0.02s", "1 failed, 6 passed in <t>s"),
        ("==== 80 passed in 61.20s (0:01:01) ====", "==== 80 passed in <t>s ===="),
        ("3 passed in 5s", "3 passed in <t>s"),
        ("0.01s call     test_x.py::test_y", "<t>s call     test_x.py::test_y"),
        ("2.50s setup    test_x.py::test_y", "<t>s setup    test_x.py::test_y"),
        ("took 12.345 seconds", "took <t>s"),
        ("/tmp/job-ab_12cd/tree/calc.py:3: in add", "<job>/tree/calc.py:3: in add"),
        ("E  OSError: /var/scratch/job-x9y8/out", "E  OSError: <job>/out"),
        ("/tmp/pytest-of-nobody/pytest-3/test_a0/f.txt", "<pytest-tmp>/test_a0/f.txt"),
        ("FileNotFoundError: /tmp/tmpab12cd_x/data", "FileNotFoundError: <tmp>/data"),
        ("E  assert <Foo object at 0x7f3a2b1c9d> == 1", "E  assert <Foo object at 0x?> == 1"),
        (".....F.                        [100%]", "......F                        [100%]"),
        (".F.s..    [ 50%]\n.F      [100%]", "....Fs    [ 50%]\n.F      [100%]"),
        # what no rerun changes stays as it is
        ("test_calc.py::test_add PASSED\nassert 2 + 2 == 5", None),
        ("Python 3.12 support; version 1.2.3; 6 passed", None),
        ("E   assert 13752509 == 1", None),  # not a sentinel's number without its message
        ("test_8227fb4e10ac_helper passed", None),  # not a whole sentinel name
    ],
)
def test_volatile_text_becomes_placeholders(text, expected):
    assert stable_log_tail(text) == (text if expected is None else expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{FAIL} FAILED", "<sentinel:must_fail> FAILED"),
        (f"PASSED {PASS}", "PASSED <sentinel:must_pass>"),
        ("______ test_8227fb4e10ac ______", "______ <sentinel:must_fail> ______"),
        (
            "test_75283facbfbb.py:6: in test_8227fb4e10ac",
            "<sentinel-module>.py:<line>: in <sentinel:must_fail>",
        ),
        ("    assert 13752509 * 6591125 == 90644505882626", "    assert <n> * <n> == <n>"),
        (f"E   {SECRET}", "E   assert (<n> * <n>) == <n>"),
        ("FAILED test_75283facbfbb.py - x", "FAILED <sentinel-module>.py - x"),
    ],
)
def test_the_sentinels_names_and_numbers_become_placeholders(text, expected):
    assert stable_log_tail(text, SENTINELS, [SECRET]) == expected


def _phases(duration: float, message: str = "") -> list[PhaseRecord]:
    return [
        PhaseRecord(when="setup", outcome="passed", duration=duration),
        PhaseRecord(
            when="call",
            outcome="failed" if message else "passed",
            message=message,
            duration=duration * 2,
        ),
        PhaseRecord(when="teardown", outcome="passed", duration=duration),
    ]


def _report(nonce: str, seconds: float, outcome: str = "passed") -> GradingReport:
    """One grading of the same patch; ``nonce`` and ``seconds`` are what a rerun changes."""
    module = f"test_{nonce * 12}.py"
    fail, ok = f"{module}::test_{nonce * 11}f", f"{module}::test_{nonce * 11}p"
    secret = f"assert ({nonce}1234 * 5678) == {nonce}99999"
    item = ItemObservation(
        nodeid="test_calc.py::test_add",
        phases=[
            PhaseRecord(when="setup", outcome="passed", duration=seconds),
            PhaseRecord(when="call", outcome=outcome, duration=seconds),
        ],
    )
    sandbox = SandboxReport(
        instance_id="toy__calc__add_1",
        backend="docker",
        isolation="container",
        patch_applied=True,
        run_status="finished",
        observations=Observations(started=True, finished=True, items=[item]),
        exit_code=1,
        seconds=seconds,
        log_tail=(
            f"{'.F.' if int(nonce) % 2 else '..F'} [100%]\n"
            f"___ test_{nonce * 11}f ___\n{module}:{nonce}: in test_{nonce * 11}f\n"
            f"E   {secret}\n1 failed, 2 passed in {seconds:.2f}s (0:00:0{int(seconds)})\n"
            f"/tmp/job-{nonce}x_{nonce}/tree at 0x7f{nonce}c0\n"
        ),
        sentinels={fail: "must_fail", ok: "must_pass"},
        sentinel_items=sorted(  # the sentinels run in a per-run order
            [
                ItemObservation(nodeid=ok, phases=_phases(seconds)),
                ItemObservation(nodeid=fail, phases=_phases(seconds, secret)),
            ],
            key=lambda i: i.nodeid,
            reverse=int(nonce) % 2 == 1,
        ),
        timeouts=[
            TestTimeout(
                nodeid="test_calc.py::test_mul",
                index=1,
                seconds=seconds,
                limit_s=5.0,
                reproduced=True,
                cpu_s=seconds / 2,
                cpu_limit_s=1.0,
                limited_by="cpu" if seconds < 5.0 else "wall",  # which came first: load's call
            )
        ],
        timings={"collect_s": seconds, "tests": {"test_calc.py::test_add": seconds}},
        limits={"default_s": 5.0},
    )
    return GradingReport(
        instance_id="toy__calc__add_1",
        patch_sha256="ab" * 32,
        outcome="verdict",
        verdict="valid_1" if outcome == "passed" else "valid_0",
        resolved=int(outcome == "passed"),
        reason="r",
        sandbox=sandbox,
    )


def _stored(report: GradingReport) -> str:
    return json.dumps(stored_report(report), sort_keys=True)


def test_two_runs_of_one_grading_store_the_same_bytes():
    a, b = _report("3", 0.1234), _report("8", 7.5)
    assert a.model_dump() != b.model_dump()
    assert _stored(a) == _stored(b)


def test_a_changed_outcome_still_changes_the_stored_report():
    assert _stored(_report("3", 0.1)) != _stored(_report("3", 0.1, outcome="failed"))


def test_the_stored_report_keeps_every_fact_a_verdict_uses():
    report = _report("3", 0.25)
    body = stored_report(report)
    sandbox = body["sandbox"]
    assert {k: body[k] for k in ("verdict", "resolved", "outcome", "patch_sha256")} == {
        "verdict": "valid_1",
        "resolved": 1,
        "outcome": "verdict",
        "patch_sha256": "ab" * 32,
    }
    assert "seconds" not in sandbox and "timings" not in sandbox
    assert sandbox["sentinels"] == {
        "<sentinel:must_fail>": "must_fail",
        "<sentinel:must_pass>": "must_pass",
    }
    fail = sandbox["sentinel_items"][0]
    assert fail["nodeid"] == "<sentinel:must_fail>"
    assert [p["outcome"] for p in fail["phases"]] == ["passed", "failed", "passed"]
    assert fail["phases"][1]["message"] == "assert (<n> * <n>) == <n>"
    [item] = sandbox["observations"]["items"]
    assert item == {
        "nodeid": "test_calc.py::test_add",
        "phases": [
            {
                "when": "setup",
                "outcome": "passed",
                "wasxfail": False,
                "xfail_not_run": False,
                "xpass_strict": False,
                "message": "",
            },
            {
                "when": "call",
                "outcome": "passed",
                "wasxfail": False,
                "xfail_not_run": False,
                "xpass_strict": False,
                "message": "",
            },
        ],
    }
    assert sandbox["timeouts"] == [
        {
            "nodeid": "test_calc.py::test_mul",
            "index": 1,
            "limit_s": 5.0,
            "reproduced": True,
            "rerun": "",
            "cpu_limit_s": 1.0,
        }
    ]
    assert sandbox["limits"] == {"default_s": 5.0} and sandbox["exit_code"] == 1
    assert sandbox["log_tail"] == (
        "..F [100%]\n___ <sentinel:must_fail> ___\n<sentinel-module>.py:<line>: in "
        "<sentinel:must_fail>\nE   assert (<n> * <n>) == <n>\n1 failed, 2 passed in <t>s\n"
        "<job>/tree at 0x?\n"
    )


def test_a_report_without_a_sandbox_run_is_stored_as_it_is():
    report = GradingReport(
        instance_id="t",
        patch_sha256="0" * 64,
        outcome="verdict",
        verdict="valid_0",
        resolved=0,
        reason="empty patch",
    )
    assert stored_report(report) == report.model_dump(mode="json")
