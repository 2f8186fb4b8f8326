"""Supervised fine-tuning of a causal LM on chat sequences with loss masks (CPU or CUDA)."""

from __future__ import annotations

import dataclasses
import math
import random
import time
from dataclasses import dataclass
from typing import cast

import torch
from tqdm import tqdm

from editcredit.policy.chat import ChatTemplate
from editcredit.policy.hidden_at import hidden_at
from editcredit.protocol.budget import BudgetGuard
from editcredit.settings import Sft

#: SFT optimiser steps between two budget checks
SFT_CHUNK = 100


#: AdamW's weight decay in SFT: a constant of the method, not a setting.
WEIGHT_DECAY = 0.01


@dataclass(frozen=True)
class SFTConfig:
    """Optimisation settings of the base-model training: config ``models.<name>.sft`` (each
    field a key of it, described, bounded and defaulted in config/schema.yaml alone) and the
    model's ``seed``. No field has a default: :meth:`from_settings` builds it from the typed
    section."""

    lr: float
    batch_size: int
    max_steps: int
    """The number of optimiser steps: how far training goes depends on config and data only,
    never on the machine's speed (METHOD §11)."""
    warmup_steps: int
    observation_loss_weight: float
    end_of_turn_loss_weight: float
    """Loss weight of the end-of-turn token that closes each action (the action's other tokens
    weigh 1): the decision that the action is complete, where a policy sampled at T = 1 runs on
    into text that is no action (``try 1 expect 12``)."""
    threads: int
    """CPU threads of the training (torch intra-op): part of the config because the sums of a
    matrix product may split differently with another count, so the bytes depend on it."""
    length_grouping: int
    """Batches are drawn from pools of this many batches sorted by length (less padding, so
    more steps per second); 1 draws plain shuffled batches."""
    copy_steps: int
    """Steps of copy drills alone before the episodes' ``max_steps`` (policy.copy_drill);
    the learning-rate schedule spans both."""
    copy_rows: int
    """Copy drills added to each batch of episodes."""
    ema_decay: float
    """Weight averaging: the model written is an exponential moving average of the weights over
    the steps (each step ``avg = d * avg + (1 - d) * weights``; 0 keeps the last step's weights,
    the same bytes as without it). A step's noise then weighs less in the model sampled at T = 1."""
    seed: int

    @classmethod
    def from_settings(cls, sft: Sft, seed: int) -> SFTConfig:
        """The SFT of a model's typed ``sft`` section and its ``seed``."""
        return cls(
            **{f.name: getattr(sft, f.name) for f in dataclasses.fields(sft)}, seed=int(seed)
        )


def chat_example(
    chat: ChatTemplate, observations: list[str], actions: list[str], tool: str | None = None
) -> tuple[list[int], list[int]]:
    """Token ids and loss mask of one expert episode, rendered exactly as a rollout renders it
    (:class:`editcredit.policy.chat.Conversation`): loss on each action's tokens and the
    end-of-turn token that closes it. ``tool``: the environment's tool (the action texts are
    its action language either way)."""
    conversation = chat.conversation(tool)
    ids: list[int] = []
    mask: list[int] = []
    for k, (obs, act) in enumerate(zip(observations, actions, strict=True)):
        prompt = conversation.start(obs) if k == 0 else conversation.observe(obs)
        body = [*chat.encode_text(act), chat.end_of_turn]
        conversation.reply(body)
        ids += prompt + body
        mask += [0] * len(prompt) + [1] * len(body)
    return ids, mask


def _batch(
    examples,
    pad_id: int,
    obs_weight: float,
    device,
    end_of_turn: int | None = None,
    end_of_turn_weight: float = 1.0,
):
    """Ids and per-token loss weights (1 on actions, ``end_of_turn_weight`` on the
    ``end_of_turn`` token that closes an action, ``obs_weight`` on the observations the policy
    reads: a language-modelling signal that teaches the code), right-padded (weight 0 on
    padding)."""
    width = max(len(ids) for ids, _ in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    weights = torch.zeros((len(examples), width), dtype=torch.float32)
    for row, (seq, mask) in enumerate(examples):
        n = len(seq)
        ids[row, :n] = torch.tensor(seq)
        weights[row, :n] = torch.tensor(
            [
                (end_of_turn_weight if t == end_of_turn else 1.0) if m else obs_weight
                for t, m in zip(seq, mask, strict=True)
            ]
        )
    return ids.to(device), weights.to(device)


def weighted_lm_loss(model, ids, weights, states=hidden_at) -> torch.Tensor:
    """Next-token cross-entropy, each target token weighted, normalised by the weight sum.

    Rows are right-padded, so causal attention alone keeps every real token from seeing the
    padding: no attention mask is passed, which lets SDPA take its fused causal kernel instead
    of materialising a mask. The last decoder layer, the output head and the cross-entropy run
    only on the positions whose target weighs more than 0 (with observation weight 0, the
    actions alone; :mod:`editcredit.policy.hidden_at`). All leave the loss and its gradient
    what they were, up to the order of floating-point sums. ``states``: how the hidden states
    at the read positions are computed (``all_hidden_at``: the full pass, for comparison)."""
    targets, w = ids[:, 1:], weights[:, 1:]
    keep = w > 0
    hidden = states(model, ids[:, :-1], keep)
    logits = model.get_output_embeddings()(hidden).float()
    ce = torch.nn.functional.cross_entropy(logits, targets[keep], reduction="none")
    return (ce * w[keep]).sum() / w.sum().clamp(min=1e-8)


def _grouped_order(examples, batch_size: int, grouping: int, rng: random.Random) -> list[int]:
    """One epoch of example indices: shuffled, sorted by length inside pools of ``grouping``
    batches, cut into batches whose order is shuffled again (seeded)."""
    fresh = list(range(len(examples)))
    rng.shuffle(fresh)
    if grouping <= 1:
        return fresh
    pool = batch_size * grouping
    batches = []
    for at in range(0, len(fresh), pool):
        chunk = sorted(fresh[at : at + pool], key=lambda i: len(examples[i][0]))
        batches += [chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return [i for batch in batches for i in batch]


class WeightAverage:
    """An exponential moving average of a model's parameters (copies in their own dtype,
    started from the weights it is given): ``update`` after each optimiser step, ``copy_to``
    at the end."""

    def __init__(self, model: torch.nn.Module, decay: float) -> None:
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        for avg, param in zip(self.shadow, model.parameters(), strict=True):
            avg.mul_(self.decay).add_(param.detach(), alpha=1.0 - self.decay)

    @torch.no_grad()
    def copy_to(self, model: torch.nn.Module) -> None:
        for avg, param in zip(self.shadow, model.parameters(), strict=True):
            param.copy_(avg)


def lr_factor(step: int, warmup_steps: int, max_steps: int) -> float:
    """Linear warm-up, then a cosine to 10 % of the peak at ``max_steps`` (a function of the
    step only)."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    frac = (step - warmup_steps) / max(1, max_steps - warmup_steps)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac)))


def train_sft(
    model: torch.nn.Module,
    examples: list[tuple[list[int], list[int]]],
    pad_id: int,
    cfg: SFTConfig,
    device: torch.device,
    budget: BudgetGuard | None = None,
    drills: list[tuple[list[int], list[int]]] | None = None,
    end_of_turn: int | None = None,
) -> dict[str, float]:
    """Train in place for exactly ``cfg.copy_steps + cfg.max_steps`` steps: the first
    ``copy_steps`` on batches of ``drills`` alone, the others on batches of ``examples`` with
    ``cfg.copy_rows`` drills each (drawn in turn); returns the final loss and counts.

    Deterministic on CPU: the same examples and config give the same parameters bytes,
    whatever the machine's load (no wall-clock budget decides anything). With a ``budget``,
    each chunk of :data:`SFT_CHUNK` steps is checked before it starts (a cap it would cross
    raises :class:`~editcredit.protocol.budget.BudgetExceeded`) and its wall time added after:
    the job stops, or trains exactly as without a budget. ``end_of_turn``: the token id that
    ``cfg.end_of_turn_loss_weight`` weighs where it closes an action."""
    if cfg.end_of_turn_loss_weight != 1.0 and end_of_turn is None:
        raise ValueError("SFTConfig: end_of_turn_loss_weight needs the end-of-turn token id")
    if not 0.0 <= cfg.ema_decay < 1.0:
        raise ValueError(f"SFTConfig: ema_decay {cfg.ema_decay} is outside [0, 1)")
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    if device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    model.to(device).train()
    opt = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, weight_decay=WEIGHT_DECAY, betas=(0.9, 0.98)
    )

    start = time.monotonic()
    total = cfg.copy_steps + cfg.max_steps
    if (cfg.copy_steps or cfg.copy_rows) and not drills:
        raise ValueError("SFTConfig: copy_steps or copy_rows ask for copy drills; none given")
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: lr_factor(step, cfg.warmup_steps, total)
    )
    average = WeightAverage(model, cfg.ema_decay) if cfg.ema_decay else None
    order: list[int] = []
    losses: list[float] = []
    step = drawn = 0
    bar = tqdm(total=total, desc="sft", mininterval=5.0)
    chunk_clock = time.monotonic()
    while step < total:
        if budget is not None and step % SFT_CHUNK == 0:
            last = min(step + SFT_CHUNK, total)
            budget.check(f"SFT chunk {step // SFT_CHUNK + 1} (steps {step + 1}..{last})", "sft")
            chunk_clock = time.monotonic()
        rows = cfg.batch_size if step < cfg.copy_steps else cfg.copy_rows
        given = cast(list[tuple[list[int], list[int]]], drills)  # rows > 0: checked above
        picked = [given[(drawn + k) % len(given)] for k in range(rows)] if rows else []
        drawn += rows
        if step >= cfg.copy_steps:
            if len(order) < cfg.batch_size:
                order += _grouped_order(examples, cfg.batch_size, cfg.length_grouping, rng)
            picked += [examples[i] for i in order[: cfg.batch_size]]
            del order[: cfg.batch_size]
        ids, weights = _batch(
            picked,
            pad_id,
            cfg.observation_loss_weight,
            device,
            end_of_turn,
            cfg.end_of_turn_loss_weight,
        )
        loss = weighted_lm_loss(model, ids, weights)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if average is not None:
            average.update(model)
        losses.append(float(loss.detach()))
        step += 1
        if budget is not None and (step % SFT_CHUNK == 0 or step == total):
            budget.add({"wall_seconds": time.monotonic() - chunk_clock}, unit="sft")
        bar.update(1)
        if step % 50 == 0:
            bar.set_postfix(loss=sum(losses[-50:]) / 50)
    bar.close()
    if average is not None:
        average.copy_to(model)
    model.eval()
    tail = losses[-50:] or [float("nan")]
    return {"steps": step, "seconds": time.monotonic() - start, "final_loss": sum(tail) / len(tail)}
