"""What a replay must reproduce: outcome, verdict and each test's status (not messages)."""

from __future__ import annotations

import pytest

from editcredit.replay.compare import decision, differences

STORED = {
    "outcome": "verdict",
    "verdict": "valid_1",
    "tests": {
        "t.py::a": {"status": "passed", "members": ["t.py::a"], "xfail_not_run": False},
        "t.py::b": {"status": "passed", "members": ["t.py::b"], "xfail_not_run": False},
    },
    "reason": "all expected tests pass",
}


def _with(**changes):
    body = {**STORED, "tests": {k: dict(v) for k, v in STORED["tests"].items()}}
    for key, value in changes.items():
        if key.startswith("t.py::"):
            if value is None:
                del body["tests"][key]
            else:
                body["tests"][key]["status"] = value
        else:
            body[key] = value
    return body


@pytest.mark.parametrize(
    "replayed, expected",
    [
        (_with(), []),
        (_with(reason="other words", sandbox={"log_tail": "x"}), []),
        (_with(verdict="valid_0"), ["verdict: 'valid_1' -> 'valid_0'"]),
        (_with(**{"t.py::b": "failed"}), ["test t.py::b: passed -> failed"]),
        (_with(**{"t.py::a": None}), ["test t.py::a: passed -> <absent>"]),
        (
            _with(outcome="infrastructure_failure", verdict=None, tests={}),
            [
                "outcome: 'verdict' -> 'infrastructure_failure'",
                "verdict: 'valid_1' -> None",
                "test t.py::a: passed -> <absent>",
                "test t.py::b: passed -> <absent>",
            ],
        ),
    ],
)
def test_differences(replayed, expected):
    assert differences(STORED, replayed) == expected


def test_decision_is_outcome_verdict_and_sorted_statuses():
    assert decision(STORED) == {
        "outcome": "verdict",
        "verdict": "valid_1",
        "tests": {"t.py::a": "passed", "t.py::b": "passed"},
    }
