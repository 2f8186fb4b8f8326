"""The policy update of one step: micro-batched forward/backward and the optimiser steps.

`policy_update` takes one optimiser step on a set of sequences; `step_update` splits a training
step's rollouts into mini-batches of whole task groups and takes one step per mini-batch, for a
number of passes (epochs). With one mini-batch and one epoch the two are the same.

The loss aggregation (prompt_mean, token_mean, sequence_mean) is linear in the per-token losses,
so its per-token weights over the whole batch are taken once (the gradient of the aggregation at
zero) and every micro-batch contributes ``sum(w * loss)``: the accumulated gradient equals that of
the full batch, whatever the micro-batch size.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from editcredit.rl.losses import aggregate, get_policy_loss
from editcredit.rl.token_logprobs import selected_logprobs


@dataclass(frozen=True)
class UpdateSequence:
    """One rollout as the update sees it (arrays of the same length as ``token_ids``)."""

    token_ids: Sequence[int]
    logprobs: Sequence[float]
    valid: np.ndarray
    advantages: np.ndarray
    group: Hashable


def aggregation_weights(mask: torch.Tensor, groups: Sequence[Hashable], how: str) -> torch.Tensor:
    """Per-token weights ``w`` with ``aggregate(x, mask, groups, how) == (w * x).sum()``."""
    x = torch.zeros_like(mask, dtype=torch.float64, requires_grad=True)
    total = aggregate(x, mask.to(torch.float64), list(groups), how)
    (weights,) = torch.autograd.grad(total, x, allow_unused=True)
    return torch.zeros_like(x) if weights is None else weights.detach()


def _pad(rows: Sequence[Sequence | np.ndarray], width: int, fill, dtype) -> torch.Tensor:
    out = torch.full((len(rows), width), fill, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.as_tensor(np.asarray(r), dtype=dtype)
    return out


def plan_micro_batches(lengths: Sequence[int], max_sequences: int, max_tokens: int) -> list[range]:
    """Consecutive runs of sequences, each of at most ``max_sequences`` sequences and, when
    ``max_tokens`` > 0, at most ``max_tokens`` padded tokens (count x the longest); a sequence
    longer than ``max_tokens`` forms a run of its own."""
    runs, start, longest = [], 0, 0
    for i, n in enumerate(lengths):
        count, wider = i - start + 1, max(longest, n)
        too_many = count > max_sequences or (max_tokens > 0 and count * wider > max_tokens)
        if too_many and i > start:
            runs.append(range(start, i))
            start, wider = i, n
        longest = wider
    if len(lengths) > start:
        runs.append(range(start, len(lengths)))
    return runs


def padded_batch(batch: Sequence[UpdateSequence], device: torch.device) -> tuple[torch.Tensor, ...]:
    """Right-padded [B, T] tensors of a micro-batch: token ids, attention mask, valid mask,
    rollout log-probs and token advantages."""
    w = max(len(s.token_ids) for s in batch)
    ids = _pad([s.token_ids for s in batch], w, 0, torch.long)
    attn = _pad([[1] * len(s.token_ids) for s in batch], w, 0, torch.long)
    mask = _pad([s.valid.astype(np.float32) for s in batch], w, 0.0, torch.float32)
    old = _pad([s.logprobs for s in batch], w, 0.0, torch.float32)
    adv = _pad([s.advantages for s in batch], w, 0.0, torch.float32)
    return tuple(t.to(device) for t in (ids, attn, mask, old, adv))


def generated_logprobs(
    model: torch.nn.Module,
    ids: torch.Tensor,
    attention_mask: torch.Tensor | None,
    mask: torch.Tensor,
    fill: torch.Tensor,
    temperature: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, T] log-probs the loss takes: at every valid (generated) token ``t`` the current
    policy's ``log p(ids[t] | ids[:t])``, with gradient; elsewhere ``fill`` (the rollout's, so
    the ratio there is 1 and the weight 0). Token t is predicted by position t-1; token 0 (bos)
    is never valid. Returns also the entropies at the valid tokens (detached)."""
    rows, cols = (mask[:, 1:] > 0).nonzero(as_tuple=True)
    cols = cols + 1
    autocast = ids.device.type == "cuda"
    chosen, entropy = selected_logprobs(
        model, ids, attention_mask, rows, cols, temperature, autocast=autocast
    )
    return fill.index_put((rows, cols), chosen), entropy


def policy_update(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    sequences: list[UpdateSequence],
    *,
    policy_loss: str,
    loss_aggregation: str,
    ppo_clip: float,
    dppo_delta: float,
    temperature: float,
    micro_batch_size: int,
    micro_batch_tokens: int,
    max_grad_norm: float,
) -> dict[str, float]:
    """One optimiser step on ``sequences``; returns loss, entropy, gradient norm and counts.
    Micro-batches: ``plan_micro_batches(lengths, micro_batch_size, micro_batch_tokens)``."""
    device = next(model.parameters()).device
    width = max(len(s.token_ids) for s in sequences)
    valid = _pad([s.valid.astype(np.float64) for s in sequences], width, 0.0, torch.float64)
    weights = aggregation_weights(valid, [s.group for s in sequences], loss_aggregation)
    loss_fn = get_policy_loss(policy_loss)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    total_loss = entropy_sum = tv_masked = 0.0
    n_valid = float(valid.sum())
    micro_batches = tokens = 0
    lengths = [len(s.token_ids) for s in sequences]
    for run in plan_micro_batches(lengths, micro_batch_size, micro_batch_tokens):
        start, batch = run.start, sequences[run.start : run.stop]
        if not any(s.valid.any() for s in batch):
            continue
        micro_batches += 1
        tokens += sum(len(s.token_ids) for s in batch)
        ids, _, mask, old, adv = padded_batch(batch, device)
        wts = weights[start : start + len(batch), : ids.shape[1]].to(torch.float32).to(device)
        # rows are right-padded: causal attention alone keeps real tokens off the padding, and
        # without a mask SDPA takes its fused causal kernel (the log-probs are the masked ones)
        new, entropy = generated_logprobs(model, ids, None, mask, old, temperature)
        loss_tokens, stats = loss_fn(new, old, adv, mask, ppo_clip=ppo_clip, dppo_delta=dppo_delta)
        loss = (wts * loss_tokens).sum()
        loss.backward()
        with torch.no_grad():
            entropy_sum += float(entropy.sum())  # one entry per valid token
            # the trust region's share: DPPO's mask, PPO's clipped side (no gradient either way)
            masked = stats.get("masked_fraction", stats.get("clip_fraction", 0.0))
            tv_masked += masked * float(mask.sum())
        total_loss += float(loss.detach())
    grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm))
    if micro_batches:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return {
        "loss": total_loss,
        "entropy": entropy_sum / n_valid if n_valid else math.nan,
        "grad_norm": grad_norm,
        "micro_batches": micro_batches,
        "tv_masked_fraction": tv_masked / n_valid if n_valid else 0.0,
        "valid_tokens": n_valid,
        "tokens": tokens,  # sequence tokens through the forward and backward passes
    }


def group_mini_batches(groups: Sequence[Hashable], parts: int) -> list[list[int]]:
    """Indices of the sequences split into at most ``parts`` mini-batches of whole groups, in
    order of each group's first appearance, sizes as equal as the group counts allow (the first
    ones take the extra group)."""
    order: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        order.setdefault(g, []).append(i)
    members = list(order.values())
    parts = max(1, min(parts, len(members)))
    base, extra = divmod(len(members), parts)
    out, start = [], 0
    for k in range(parts):
        size = base + (1 if k < extra else 0)
        out.append([i for m in members[start : start + size] for i in m])
        start += size
    return out


def step_update(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    sequences: list[UpdateSequence],
    *,
    mini_batches: int,
    epochs: int,
    **update_kwargs,
) -> dict[str, float]:
    """``epochs`` passes over ``sequences``, each one optimiser step per mini-batch of whole
    groups (`group_mini_batches`). The returned stats are the first pass's entropy per valid
    token, the mean loss and gradient norm over steps, the share of valid tokens the policy
    loss masked over all steps, and summed counts; ``optimizer_steps`` counts the steps."""
    plan = group_mini_batches([s.group for s in sequences], mini_batches)
    steps = []
    for _ in range(epochs):
        for part in plan:
            steps.append(
                policy_update(model, optimizer, [sequences[i] for i in part], **update_kwargs)
            )
    valid = sum(s["valid_tokens"] for s in steps)
    return {
        "loss": sum(s["loss"] for s in steps) / len(steps),
        "entropy": _weighted_mean(steps[: len(plan)], "entropy"),
        "grad_norm": sum(s["grad_norm"] for s in steps) / len(steps),
        "micro_batches": sum(s["micro_batches"] for s in steps),
        "tv_masked_fraction": _weighted_mean(steps, "tv_masked_fraction") if valid else 0.0,
        "valid_tokens": sum(s["valid_tokens"] for s in steps[: len(plan)]),
        "tokens": sum(s["tokens"] for s in steps),
        "optimizer_steps": len(steps),
    }


def _weighted_mean(steps: list[dict[str, float]], key: str) -> float:
    valid = sum(s["valid_tokens"] for s in steps if s["valid_tokens"])
    if not valid:
        return math.nan
    return sum(s[key] * s["valid_tokens"] for s in steps if s["valid_tokens"]) / valid
