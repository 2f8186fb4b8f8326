"""Per-token policy losses (PPO clip, DPPO binary-TV) and loss aggregations (METHOD §4).

All tensors are [B, T]: `logp_new` (log-probabilities under the current policy, with gradient),
`logp_rollout` (log-probabilities recorded at sampling time), `advantages` (per-token, group-centred
plus any credit) and `mask` (1.0 for valid generated tokens, 0.0 for prompt, observations, padding
and masked rollouts). Policy losses return a per-token loss that is exactly 0, with zero gradient,
wherever the token is invalid or the loss masks it; aggregation turns it into a scalar.

Every registered policy loss accepts the keywords `ppo_clip` and `dppo_delta` (and ignores the one
it does not use), so a trainer calls
`get_policy_loss(cfg.policy_loss)(lp_new, lp_old, adv, mask, ppo_clip=cfg.ppo_clip,
dppo_delta=cfg.dppo_delta)` and then `aggregate(loss, mask, groups, cfg.loss_aggregation)`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import torch

PolicyLoss = Callable[..., tuple[torch.Tensor, dict[str, float]]]
GroupIndex = Sequence[Hashable] | torch.Tensor | None
Aggregation = Callable[[torch.Tensor, torch.Tensor, GroupIndex], torch.Tensor]

POLICY_LOSSES: dict[str, PolicyLoss] = {}
LOSS_AGGREGATIONS: dict[str, Aggregation] = {}


def register_policy_loss(name: str) -> Callable[[PolicyLoss], PolicyLoss]:
    """Decorator: register a policy loss under `name` (names are unique)."""

    def deco(fn: PolicyLoss) -> PolicyLoss:
        if name in POLICY_LOSSES:
            raise ValueError(f"policy loss {name!r} is already registered")
        POLICY_LOSSES[name] = fn
        return fn

    return deco


def get_policy_loss(name: str) -> PolicyLoss:
    """Look a policy loss up by name; an unknown name raises ValueError naming it."""
    try:
        return POLICY_LOSSES[name]
    except KeyError:
        known = ", ".join(sorted(POLICY_LOSSES))
        raise ValueError(f"unknown policy loss {name!r}; known: {known}") from None


def _valid(mask: torch.Tensor) -> tuple[torch.Tensor, float]:
    valid = mask > 0
    return valid, float(valid.sum().item())


def _fraction(flags: torch.Tensor, n_valid: float) -> float:
    return float(flags.sum().item()) / n_valid if n_valid > 0 else 0.0


@register_policy_loss("ppo_clip")
def ppo_clip_loss(
    logp_new: torch.Tensor,
    logp_rollout: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    ppo_clip: float,
    **_: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO: loss = -min(r*A, clip(r, 1-eps, 1+eps)*A), r = exp(logp_new - logp_rollout).

    Stats: `clip_fraction` = share of valid tokens where the clipped term is active (no gradient),
    split into `clip_high_fraction` (A > 0, r > 1+eps) and `clip_low_fraction` (A < 0, r < 1-eps).
    """
    valid, n_valid = _valid(mask)
    log_ratio = torch.where(valid, logp_new - logp_rollout, torch.zeros_like(logp_new))
    ratio = torch.exp(log_ratio)
    adv = torch.where(valid, advantages, torch.zeros_like(advantages))
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - ppo_clip, 1.0 + ppo_clip) * adv
    loss = torch.where(valid, -torch.minimum(unclipped, clipped), torch.zeros_like(unclipped))
    with torch.no_grad():
        high = valid & (adv > 0) & (ratio > 1.0 + ppo_clip)
        low = valid & (adv < 0) & (ratio < 1.0 - ppo_clip)
    stats = {
        "clip_fraction": _fraction(high | low, n_valid),
        "clip_high_fraction": _fraction(high, n_valid),
        "clip_low_fraction": _fraction(low, n_valid),
    }
    return loss, stats


def dppo_tv_mask(
    logp_new: torch.Tensor, logp_rollout: torch.Tensor, advantages: torch.Tensor, delta: float
) -> torch.Tensor:
    """Boolean [B, T]: tokens whose probability already moved more than `delta` the way A pushes.

    With p = exp(logp): A > 0 masks when p_now - p_rollout > delta, A < 0 masks when
    p_rollout - p_now > delta; A == 0 is never masked; a move of exactly `delta` is not masked.
    """
    with torch.no_grad():
        diff = torch.exp(logp_new.detach()) - torch.exp(logp_rollout)
        return ((advantages > 0) & (diff > delta)) | ((advantages < 0) & (-diff > delta))


@register_policy_loss("dppo_binary_tv")
def dppo_binary_tv_loss(
    logp_new: torch.Tensor,
    logp_rollout: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    dppo_delta: float,
    **_: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """DPPO binary-TV: loss = -r*A with r = exp(logp_new - logp_rollout), r not detached.

    The gradient is therefore -A * r * d(logp_new), the importance-weighted policy gradient (at
    r = 1 it equals that of -A*logp_new). A token is masked (loss 0, no gradient) when
    `dppo_tv_mask` flags it, i.e. |p_now - p_rollout| > delta in the direction its advantage pushes.
    Stats: `masked_fraction` = share of valid tokens masked by the TV rule.
    """
    valid, n_valid = _valid(mask)
    tv_masked = dppo_tv_mask(logp_new, logp_rollout, advantages, dppo_delta) & valid
    keep = valid & ~tv_masked
    log_ratio = torch.where(keep, logp_new - logp_rollout, torch.zeros_like(logp_new))
    adv = torch.where(keep, advantages, torch.zeros_like(advantages))
    loss = torch.where(keep, -torch.exp(log_ratio) * adv, torch.zeros_like(log_ratio))
    return loss, {"masked_fraction": _fraction(tv_masked, n_valid)}


def register_aggregation(name: str) -> Callable[[Aggregation], Aggregation]:
    """Decorator: register a loss aggregation under `name`."""

    def deco(fn: Aggregation) -> Aggregation:
        if name in LOSS_AGGREGATIONS:
            raise ValueError(f"loss aggregation {name!r} is already registered")
        LOSS_AGGREGATIONS[name] = fn
        return fn

    return deco


def _masked(loss_tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    valid = mask > 0
    zeroed = torch.where(valid, loss_tokens, torch.zeros_like(loss_tokens))
    return zeroed, valid.to(loss_tokens.dtype)


def _mean_of_nonempty(
    sums: torch.Tensor, counts: torch.Tensor, anchor: torch.Tensor
) -> torch.Tensor:
    """Mean of sums/counts over entries with count > 0; 0 (keeping the graph) when none."""
    nonempty = counts > 0
    if not bool(nonempty.any()):
        return anchor.sum() * 0.0
    return (sums[nonempty] / counts[nonempty]).mean()


@register_aggregation("token_mean")
def token_mean(
    loss_tokens: torch.Tensor, mask: torch.Tensor, group_index: GroupIndex = None
) -> torch.Tensor:
    """Sum of the loss over all valid tokens of the batch, divided by their count."""
    loss, valid = _masked(loss_tokens, mask)
    return _mean_of_nonempty(loss.sum().reshape(1), valid.sum().reshape(1), loss)


@register_aggregation("sequence_mean")
def sequence_mean(
    loss_tokens: torch.Tensor, mask: torch.Tensor, group_index: GroupIndex = None
) -> torch.Tensor:
    """Token mean inside each sequence, then the mean over sequences with a valid token."""
    loss, valid = _masked(loss_tokens, mask)
    return _mean_of_nonempty(loss.sum(dim=1), valid.sum(dim=1), loss)


@register_aggregation("prompt_mean")
def prompt_mean(
    loss_tokens: torch.Tensor, mask: torch.Tensor, group_index: GroupIndex
) -> torch.Tensor:
    """Token mean over all valid tokens of each task's group, then the mean over groups."""
    if group_index is None:
        raise ValueError("prompt_mean needs group_index (the task group of each sequence)")
    loss, valid = _masked(loss_tokens, mask)
    labels = group_index.tolist() if isinstance(group_index, torch.Tensor) else list(group_index)
    if len(labels) != loss.shape[0]:
        raise ValueError(f"group_index has {len(labels)} entries for {loss.shape[0]} sequences")
    slots: dict[Hashable, int] = {}
    index = torch.tensor([slots.setdefault(g, len(slots)) for g in labels], dtype=torch.long)
    index = index.to(loss.device)
    sums = torch.zeros(len(slots), dtype=loss.dtype, device=loss.device)
    counts = torch.zeros(len(slots), dtype=loss.dtype, device=loss.device)
    sums = sums.index_add(0, index, loss.sum(dim=1))
    counts = counts.index_add(0, index, valid.sum(dim=1))
    return _mean_of_nonempty(sums, counts, loss)


def aggregate(
    loss_tokens: torch.Tensor,
    mask: torch.Tensor,
    group_index: GroupIndex,
    how: str,
) -> torch.Tensor:
    """Aggregate a [B, T] per-token loss into a scalar with the named aggregation."""
    try:
        fn = LOSS_AGGREGATIONS[how]
    except KeyError:
        known = ", ".join(sorted(LOSS_AGGREGATIONS))
        raise ValueError(f"unknown loss aggregation {how!r}; known: {known}") from None
    return fn(loss_tokens, mask, group_index)
