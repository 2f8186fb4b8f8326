"""Terminal reward (METHOD §4): Y, -0.5 format error, -0.25 PASS_TO_PASS regression."""

from __future__ import annotations

import pytest
from taskfactory import CONFIG

from editcredit.agent.reward import terminal_reward
from editcredit.grading.grader import GradingReport

#: The default config's penalties (-0.5, -0.25), as the workflow passes them.
REWARD = CONFIG["reward"]


def report(outcome="verdict", resolved=0, G=0, **extra):
    return GradingReport(
        instance_id="t",
        patch_sha256="x",
        outcome=outcome,
        verdict=None if outcome != "verdict" else "valid_0",
        resolved=resolved,
        reason="",
        G=G,
        **extra,
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
    r = terminal_reward(report(resolved=resolved, G=G), fmt, **REWARD)
    assert r.reward == pytest.approx(reward) and not r.masked


def test_infrastructure_failure_is_masked_not_zero():
    r = terminal_reward(
        report(outcome="infrastructure_failure", resolved=None, G=None), False, **REWARD
    )
    assert r.masked and r.reward is None and r.Y is None


@pytest.mark.parametrize(
    "rep,fmt,in_episode,reward,masked,cause",
    [
        # only infrastructure failures are masked, each with its cause
        (
            report("infrastructure_failure", None, None, infra_cause="sandbox_died"),
            0,
            0,
            None,
            True,
            "sandbox_died",
        ),
        (
            report("infrastructure_failure", None, None, infra_cause="timeout_not_reproduced"),
            0,
            0,
            None,
            True,
            "timeout_not_reproduced",
        ),
        # an infrastructure failure in one of the episode's own test runs: as evaluation
        # discards such an episode, training masks it
        (report(resolved=1), 0, 1, None, True, "in_episode_infra"),
        # tampering scores the format penalty: never masked, never 1
        (report(resolved=None, tampering=True), 0, 0, -0.5, False, ""),
        (report(resolved=None, tampering=True), 1, 0, -0.5, False, ""),
        # a patch-caused timeout is an ordinary failure (a valid 0, scored)
        (report(resolved=0, G=1), 0, 0, -0.25, False, ""),
    ],
)
def test_masking_and_tampering(rep, fmt, in_episode, reward, masked, cause):
    r = terminal_reward(rep, bool(fmt), **REWARD, in_episode_failures=in_episode)
    assert (r.reward, r.masked, r.mask_cause) == (reward, masked, cause)
    if rep.tampering:
        assert (r.Y, r.format_error) == (0, 1)
