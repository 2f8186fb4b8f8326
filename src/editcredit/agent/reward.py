"""The terminal reward (METHOD §4), the same for every arm."""

from __future__ import annotations

from dataclasses import dataclass

from editcredit.grading.grader import GradingReport


@dataclass(frozen=True)
class RewardComponents:
    """Y, the format-error and PASS_TO_PASS-regression indicators, and the reward.

    ``masked`` marks a rollout whose final grading failed for infrastructure reasons, or one
    of whose own test runs did (``in_episode_infra``: the agent saw a broken observation, as
    evaluation discards such an episode): it is masked out of the loss, never scored 0
    (METHOD §5); its reward is None and ``mask_cause`` says why. A patch that
    tampered with the test process's reports is scored as a format error (never masked,
    never 1); a patch-caused timeout is an ordinary failure (METHOD §6).
    """

    Y: int | None
    format_error: int
    p2p_regression: int | None
    reward: float | None
    masked: bool
    mask_cause: str = ""


def terminal_reward(
    report: GradingReport,
    format_error: bool,
    format_penalty: float,
    regression_penalty: float,
    in_episode_failures: int = 0,
) -> RewardComponents:
    """The reward of one graded episode: ``Y + format_penalty x format error +
    regression_penalty x PASS_TO_PASS regression`` (the penalties are config ``reward``'s, which
    every caller passes), or a masked one for an infrastructure failure."""
    fmt = int(format_error or report.tampering)
    if report.outcome == "infrastructure_failure":
        return RewardComponents(None, fmt, None, None, True, report.infra_cause or "unknown")
    if in_episode_failures:
        return RewardComponents(None, fmt, None, None, True, "in_episode_infra")
    y = int(report.resolved == 1)
    regression = int(report.G == 1) if report.G is not None and not report.tampering else 0
    reward = y + format_penalty * fmt + regression_penalty * regression
    return RewardComponents(y, fmt, regression, reward, False)
