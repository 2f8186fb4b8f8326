"""The stop study's records (``results/stop/...``): a policy's summary, its row of the policy
table with the paired difference against the best fixed policy at matched cost, a point of the
success-cost curve, the gate chosen on the fit split and its verdict on the sealed split. Each is
the JSON row its writer (:mod:`editcredit.stopping.study`) builds, keys in the written order."""

from __future__ import annotations

from typing import NotRequired, TypedDict

__all__ = [
    "CurvePoint",
    "GateChoice",
    "PairedDifference",
    "PolicyRow",
    "PolicySummary",
    "StopGateVerdict",
    "VsFixed",
]


class PolicySummary(TypedDict):
    """A policy's outcomes on one split: equal-weight means over tasks (METHOD §8)."""

    success: float  # mean over tasks of the task's mean success
    tokens: float  # ... of its mean tokens spent
    unresolved_stops: int  # trajectories stopped on an unresolved grading
    trajectories: int
    tasks: int


class PairedDifference(TypedDict):
    """Success of one policy minus another, paired per task, with the task-bootstrap CI."""

    difference: float | None  # None when there is no task
    ci: list[float | None]  # [lower, upper]
    tasks: int


class VsFixed(TypedDict):
    """The difference against the best fixed policy at matched cost."""

    policy: str  # that fixed policy
    difference: float | None
    ci: list[float | None]
    tasks: int


class PolicyRow(TypedDict):
    """A row of the policy table: its kind, its summary (:class:`PolicySummary`), and (not a
    fixed policy, with trajectories) its difference against the best fixed policy at matched
    cost."""

    kind: str  # "fixed", "agent", ...
    success: float
    tokens: float
    unresolved_stops: int
    trajectories: int
    tasks: int
    vs_fixed: NotRequired[VsFixed]


class CurvePoint(TypedDict):
    """A point of the success-cost curve."""

    policy: str
    kind: str
    tokens: float
    success: float


class GateChoice(TypedDict):
    """The gate chosen on the fit split."""

    candidate: str  # the gated policy's grid value with the best fit success within the cap
    baseline: str  # the best fixed policy within the same cap
    fit_token_cap: float  # max_cost_ratio x the agent's own fit tokens
    fit: dict[str, PolicyRow]  # the two policies' fit rows


class StopGateVerdict(TypedDict):
    """The gate on the sealed split (recorded once)."""

    candidate: str
    baseline: str
    difference: float | None  # sealed success of candidate minus baseline, paired per task
    ci: list[float | None]  # its task-bootstrap CI
    tasks: int
    sealed: dict[str, PolicySummary]  # the two policies' sealed summaries
    min_difference: float
    ci_lower_above: float
    verdict: str  # "pass" or "fail"
