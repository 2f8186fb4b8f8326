"""GRPO group advantages (METHOD §4): reward minus the group mean, optional std division, and
the weight the loss gives negative token advantages."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def group_advantages(
    rewards: Sequence[float | None],
    group_ids: Sequence[str],
    normalize_std: bool,
    eps: float = 1e-6,
) -> list[float | None]:
    """Centre each reward on the mean of its group; masked (None) rewards stay None.

    A group is the samples of one task in one step, identified by `group_ids`. A None reward
    (masked rollout, e.g. an infrastructure failure) is excluded from its group's mean and std and
    gets a None advantage: it is never scored 0. With `normalize_std` the centred values are divided
    by the group's population standard deviation, unless it is below `eps`: zero-variance groups
    are kept and their advantages stay the centred values (all zeros).
    """
    if len(rewards) != len(group_ids):
        raise ValueError(f"{len(rewards)} rewards but {len(group_ids)} group ids")
    members: dict[str, list[float]] = {}
    for reward, gid in zip(rewards, group_ids, strict=True):
        if reward is None:
            continue
        if not math.isfinite(reward):
            raise ValueError(f"non-finite reward {reward!r} in group {gid!r}; mask it with None")
        members.setdefault(gid, []).append(float(reward))

    stats: dict[str, tuple[float, float]] = {}
    for gid, values in members.items():
        mean = math.fsum(values) / len(values)
        std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
        stats[gid] = (mean, std)

    out: list[float | None] = []
    for reward, gid in zip(rewards, group_ids, strict=True):
        if reward is None:
            out.append(None)
            continue
        mean, std = stats[gid]
        centred = float(reward) - mean
        out.append(centred / std if normalize_std and std >= eps else centred)
    return out


def token_advantages(seq_adv: float, n_tokens: int) -> list[float]:
    """Broadcast one sequence advantage to each of its `n_tokens` valid generated tokens."""
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, got {n_tokens}")
    return [float(seq_adv)] * n_tokens


def weigh_negative(advantages: np.ndarray, weight: float) -> np.ndarray:
    """Token advantages with every negative entry multiplied by ``weight`` (in [0, 1]); positive
    and zero entries unchanged. 1 is plain GRPO; 0 learns from what went better than its group
    only. A failure's sampled tokens are unlikely ones, whose log-probability gradient is of
    order |A| per token, while a success's likely tokens have almost none: at full weight the
    push-down dominates a step and drags the tokens both share (docs/training.md)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"negative advantage weight must be in [0, 1], got {weight}")
    advantages = np.asarray(advantages, dtype=np.float64)
    return np.where(advantages < 0, advantages * weight, advantages)
