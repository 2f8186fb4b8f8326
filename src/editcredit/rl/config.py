"""The training configuration of one GRPO run (METHOD §3-§5), validated on construction.

The defaults mirror METHOD's bold values; in production the values come from config/config.yaml
(METHOD: defaults live there) through `TrainConfig.from_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

LOSS_AGGREGATION_NAMES = ("prompt_mean", "token_mean", "sequence_mean")
ARMS = ("O", "B", "M", "E")


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one training run: optimiser, GRPO, policy loss, reward and credit."""

    lr: float = 1e-6
    """Learning rate of the optimiser."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    group_size: int = 8
    """Samples per task in one step (one GRPO group)."""
    tasks_per_step: int = 16
    """Tasks per training step (batch = tasks_per_step x group_size rollouts)."""
    normalize_std: bool = False
    """Divide the group-centred advantages by the group standard deviation."""
    loss_aggregation: str = "prompt_mean"
    """How per-token losses become one scalar: prompt_mean, token_mean or sequence_mean."""
    policy_loss: str = "dppo_binary_tv"
    """Name of the policy loss in `editcredit.rl.losses.POLICY_LOSSES`."""
    ppo_clip: float = 0.2
    """PPO ratio clipping epsilon: the ratio is clipped to [1 - eps, 1 + eps]."""
    dppo_delta: float = 0.15
    """DPPO binary-TV threshold on |p_now - p_rollout| in the advantage's direction."""
    zero_variance_filter: bool = False
    """Drop groups whose rewards are all equal (METHOD keeps them: false)."""
    format_penalty: float = -0.5
    """Terminal reward added for a format error (an action that cannot be parsed)."""
    regression_penalty: float = -0.25
    """Terminal reward added when a PASS_TO_PASS test regresses."""
    credit_lambda: float = 0.1
    """Credit weight lambda of the auxiliary term (METHOD §3)."""
    credit_c: float = 1.0
    """Per-token credit cap c (METHOD §3)."""
    query_rate: float = 1.0
    """Probability p that an eligible trajectory gets its counterfactual query."""
    arm: str = "O"
    """Credit arm: O (none), B (broadcast), M (block), E (advantage-on-block)."""
    steps: int = 80
    """Number of training steps; the endpoint checkpoint."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many steps."""
    seed: int = 42
    """Training seed."""
    micro_batch_size: int = 8
    """Sequences per forward/backward pass (gradient accumulation over micro-batches)."""
    max_grad_norm: float = 1.0
    """Gradient-norm clipping threshold."""

    def __post_init__(self) -> None:
        from editcredit.rl.losses import POLICY_LOSSES  # lazy: keeps torch out of config import

        _check_choice("loss_aggregation", self.loss_aggregation, LOSS_AGGREGATION_NAMES)
        _check_choice("arm", self.arm, ARMS)
        _check_choice("policy_loss", self.policy_loss, tuple(sorted(POLICY_LOSSES)))
        for name in ("group_size", "tasks_per_step", "steps", "checkpoint_every"):
            _check(name, getattr(self, name) >= 1, "must be >= 1")
        _check("micro_batch_size", self.micro_batch_size >= 1, "must be >= 1")
        for name in ("lr", "temperature", "ppo_clip", "dppo_delta", "credit_c", "max_grad_norm"):
            _check(name, getattr(self, name) > 0, "must be > 0")
        _check("credit_lambda", self.credit_lambda >= 0, "must be >= 0")
        _check("query_rate", 0.0 <= self.query_rate <= 1.0, "must be in [0, 1]")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """Build from a mapping; unknown keys and invalid values raise ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"TrainConfig: unknown key(s): {', '.join(unknown)}")
        return cls(**d)


def _check(name: str, ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"TrainConfig.{name}: {what}")


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    _check(name, value in choices, f"{value!r} is not one of {', '.join(choices)}")
