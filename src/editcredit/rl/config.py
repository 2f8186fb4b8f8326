"""The training configuration of one GRPO run (METHOD §3-§5), validated on construction.

The values come from config/config.yaml through `TrainConfig.from_dict` (METHOD: defaults live
there, never in code); the full-study values are in config/presets/full-study.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

LOSS_AGGREGATION_NAMES = ("prompt_mean", "token_mean", "sequence_mean")
ARMS = ("O", "B", "M", "E")


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one training run: optimiser, GRPO, policy loss and credit.

    Every field is required: the values live in config/config.yaml (``training.grpo``, with the
    agent's sampling temperature and the run's arm and seed), never in code.
    """

    lr: float
    """Learning rate of the optimiser (AdamW, no weight decay)."""
    temperature: float
    """Sampling temperature of the rollouts; the update's log-probs use the same one."""
    group_size: int
    """Samples per task in one step (one GRPO group)."""
    tasks_per_step: int
    """Tasks per training step (batch = tasks_per_step x group_size rollouts)."""
    normalize_std: bool
    """Divide the group-centred advantages by the group standard deviation."""
    loss_aggregation: str
    """How per-token losses become one scalar: prompt_mean, token_mean or sequence_mean."""
    policy_loss: str
    """Name of the policy loss in `editcredit.rl.losses.POLICY_LOSSES`."""
    negative_weight: float
    """Weight of negative token advantages in the loss, in [0, 1] (1: plain GRPO; the credit
    records keep the unweighted values)."""
    ppo_clip: float
    """PPO ratio clipping epsilon: the ratio is clipped to [1 - eps, 1 + eps]."""
    dppo_delta: float
    """DPPO binary-TV threshold on |p_now - p_rollout| in the advantage's direction."""
    zero_variance_filter: bool
    """Drop groups whose rewards are all equal (METHOD keeps them: false)."""
    credit_lambda: float
    """Credit weight lambda of the auxiliary term (METHOD §3)."""
    credit_c: float
    """Per-token credit cap c (METHOD §3)."""
    query_rate: float
    """Probability p that an eligible trajectory gets its counterfactual query."""
    arm: str
    """Credit arm: O (none), B (broadcast), M (block), E (advantage-on-block)."""
    seed: int
    """Training seed (task order, sampling seeds)."""
    micro_batch_size: int
    """Sequences per forward/backward pass (gradient accumulation over micro-batches)."""
    micro_batch_tokens: int
    """Cap on the padded tokens (sequences x the longest) of one micro-batch, 0 for none; a
    sequence longer than the cap is a micro-batch of its own. Like ``micro_batch_size`` it only
    splits the work: the accumulated gradient is the whole batch's."""
    gradient_checkpointing: bool
    """Recompute each layer's activations in the backward pass instead of keeping them (memory
    for compute); the gradients are the same."""
    max_grad_norm: float
    """Gradient-norm clipping threshold."""
    mini_batches: int
    """Optimiser steps per pass over one step's rollouts: the batch is split by task group into
    this many mini-batches of whole groups, each its own aggregation and step. From the second
    mini-batch on, the policy differs from the one that sampled, so the policy loss's trust
    region (PPO clip, DPPO mask) acts; 1 is one step on the whole batch."""
    epochs: int
    """Passes over one step's rollouts (each pass takes ``mini_batches`` optimiser steps)."""

    def __post_init__(self) -> None:
        from editcredit.rl.losses import POLICY_LOSSES  # lazy: keeps torch out of config import

        _check_choice("loss_aggregation", self.loss_aggregation, LOSS_AGGREGATION_NAMES)
        _check_choice("arm", self.arm, ARMS)
        _check_choice("policy_loss", self.policy_loss, tuple(sorted(POLICY_LOSSES)))
        for name in ("group_size", "tasks_per_step"):
            _check(name, getattr(self, name) >= 1, "must be >= 1")
        for name in ("micro_batch_size", "mini_batches", "epochs"):
            _check(name, getattr(self, name) >= 1, "must be >= 1")
        _check("micro_batch_tokens", self.micro_batch_tokens >= 0, "must be >= 0")
        for name in ("lr", "temperature", "ppo_clip", "dppo_delta", "credit_c", "max_grad_norm"):
            _check(name, getattr(self, name) > 0, "must be > 0")
        _check("credit_lambda", self.credit_lambda >= 0, "must be >= 0")
        _check("query_rate", 0.0 <= self.query_rate <= 1.0, "must be in [0, 1]")
        _check("negative_weight", 0.0 <= self.negative_weight <= 1.0, "must be in [0, 1]")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """Build from a mapping; unknown keys and invalid values raise ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"TrainConfig: unknown key(s): {', '.join(unknown)}")
        missing = sorted(known - set(d))
        if missing:
            raise ValueError(f"TrainConfig: missing key(s): {', '.join(missing)}")
        return cls(**d)


def _check(name: str, ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"TrainConfig.{name}: {what}")


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    _check(name, value in choices, f"{value!r} is not one of {', '.join(choices)}")
