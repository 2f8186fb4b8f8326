"""Terminal reward (METHOD §4): Y, -0.5 format error, -0.25 PASS_TO_PASS regression."""

from __future__ import annotations

import pytest

from editcredit.agent.reward import terminal_reward
from editcredit.grading.grader import GradingReport


def report(outcome="verdict", resolved=0, G=0):
    return GradingReport(
        instance_id="t",
        patch_sha256="x",
        outcome=outcome,
        verdict=None if outcome != "verdict" else "valid_0",
        resolved=resolved,
        reason="",
        G=G,
    )


@pytest.mark.parametrize(
    "resolved,G,fmt,reward",
    [
        (1, 0, False, 1.0),
        (1, 0, True, 0.5),
        (0, 0, False, 0.0),
        (0, 1, False, -0.25),
        (0, 1, True, -0.75),
        (None, 0, False, 0.0),
    ],
)
def test_reward_table(resolved, G, fmt, reward):
    r = terminal_reward(report(resolved=resolved, G=G), fmt)
    assert r.reward == pytest.approx(reward) and not r.masked


def test_infrastructure_failure_is_masked_not_zero():
    r = terminal_reward(report(outcome="infrastructure_failure", resolved=None, G=None), False)
    assert r.masked and r.reward is None and r.Y is None
