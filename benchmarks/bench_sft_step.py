"""Seconds per SFT step of the base-model fit: the loss as fitted now (no attention mask on the
right-padded rows; the last decoder layer and the output head only at positions whose target
weighs more than 0) beside the plain one (an attention mask on the padding, logits at every
position) and the previous fit (every layer at every position, the head where the target
weighs), side by side in one run on the same batches.

The batches are drawn as the fit draws them (``policy.sft``: length-grouped, seeded) from an
expert corpus written by ``benchmarks/bench_base_variants.py`` (``--corpus``), or from
synthetic episodes of ``--length`` tokens with ``--action-share`` of them actions. The model
is a fresh tiny policy of the configured shape (``--positions``). Usage::

    python benchmarks/bench_sft_step.py --corpus benchmarks/out/base_variants/corpus-KEY.json \
        --positions 2048 --observation-weight 0 --steps 40

Writes benchmarks/out/sft_step.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch
from synthetic import fresh_default_policy

from editcredit.policy.hidden_at import all_hidden_at
from editcredit.policy.sft import _batch, _grouped_order, weighted_lm_loss

ROOT = Path(__file__).resolve().parents[1]
VOCAB = 2048
PAD = 0


def plain_loss(model, ids, weights):
    """The reference: the padding masked, logits at every position, weighted cross-entropy."""
    lengths = (weights > 0).long().cumsum(-1).argmax(-1) + 1
    attn = (torch.arange(ids.size(1))[None, :] < lengths[:, None]).long()
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1), reduction="none"
    )
    w = weights[:, 1:].reshape(-1)
    return (ce * w).sum() / w.sum().clamp(min=1e-8)


def all_positions_loss(model, ids, weights):
    """The fit before the last layer was cut to the read positions: every decoder layer at
    every position, the output head only where the target weighs."""
    return weighted_lm_loss(model, ids, weights, all_hidden_at)


def corpus_examples(path: Path, positions: int) -> list[tuple[list[int], list[int]]]:
    """The corpus episodes as token ids and loss masks, rendered with a tokenizer trained on
    them (as the fit does), cut to ``positions``."""
    from editcredit.policy.chat import ChatTemplate
    from editcredit.policy.sft import chat_example
    from editcredit.policy.tokenizer import train_tokenizer

    episodes = json.loads(path.read_text())["corpus"]
    texts = [t for obs, acts in episodes for t in (*obs, *acts)]
    chat = ChatTemplate(train_tokenizer(texts, VOCAB))
    examples = [chat_example(chat, obs, acts) for obs, acts in episodes]
    return [(ids[:positions], mask[:positions]) for ids, mask in examples]


def synthetic_examples(args) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(args.seed)
    out = []
    for _ in range(512):
        n = rng.randint(args.length // 2, args.length)
        out.append(
            (
                [rng.randrange(2, VOCAB) for _ in range(n)],
                [int(rng.random() < args.action_share) for _ in range(n)],
            )
        )
    return out


def seconds_per_step(loss_fn, examples, args) -> tuple[float, list[float]]:
    model = fresh_default_policy(VOCAB, PAD, 1, args.positions).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    order = _grouped_order(examples, 8, 16, random.Random(args.seed))
    losses, clock = [], time.perf_counter()
    for step in range(args.steps):
        batch = [examples[i] for i in order[step * 8 : step * 8 + 8]]
        ids, weights = _batch(batch, PAD, args.observation_weight, torch.device("cpu"))
        loss = loss_fn(model, ids, weights)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return (time.perf_counter() - clock) / args.steps, losses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="a corpus-KEY.json of bench_base_variants.py")
    ap.add_argument("--positions", type=int, default=2048)
    ap.add_argument("--observation-weight", type=float, default=0.0)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--length", type=int, default=2048, help="synthetic: longest episode")
    ap.add_argument("--action-share", type=float, default=0.12, help="synthetic: action share")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.corpus:
        examples = corpus_examples(Path(args.corpus), args.positions)
    else:
        examples = synthetic_examples(args)
    if len(examples) < 8 * args.steps:
        raise SystemExit(f"{len(examples)} episodes: fewer than {args.steps} batches of 8")
    plain, plain_losses = seconds_per_step(plain_loss, examples, args)
    every, every_losses = seconds_per_step(all_positions_loss, examples, args)
    ours, our_losses = seconds_per_step(weighted_lm_loss, examples, args)
    gap = max(abs(a - b) for a, b in zip(plain_losses, our_losses, strict=True))
    record = {
        "settings": vars(args),
        "plain_s_per_step": round(plain, 3),
        "all_positions_last_layer_s_per_step": round(every, 3),
        "fitted_s_per_step": round(ours, 3),
        "speedup": round(plain / ours, 2),
        "speedup_over_all_positions_last_layer": round(every / ours, 2),
        "largest_loss_gap": gap,
        "largest_loss_gap_all_positions": max(
            abs(a - b) for a, b in zip(every_losses, our_losses, strict=True)
        ),
    }
    out = ROOT / "benchmarks" / "out" / "sft_step.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
