"""Can the tiny architecture learn to copy from its context within the base's budget?

A policy that fixes bugs in functions it never saw must quote what is on screen, which a
transformer does with an induction circuit (find the earlier occurrence of the current token,
predict what followed it). This benchmark trains a fresh model of the configured architecture
on copy drills alone and reports, every ``--every`` steps, how often its greedy prediction is
right on held-out drills built from the dev split's source files (functions it never saw):

- ``first``: the first token of each copied span (a guess among the context's tokens);
- ``continued``: the span's later tokens, which an induction circuit predicts exactly.

With random drills, the same two figures on held-out random drills (``random_first``,
``random_continued``) show when the circuit forms, before it carries over to code.

Drill kinds (``--drills``): ``code`` (policy.copy_drill over the train split's source lines, the
drills of ``models.tiny.sft.copy_steps``) or ``random`` (contexts of tokens drawn uniformly from
the ``--pool`` commonest code tokens, of random length, so neither bigrams nor a fixed offset
can predict a span: only content lookup can). The training loss is printed beside. Needs the
frozen suite and a tokenizer (any base model directory). Usage::

    python benchmarks/bench_copy_capacity.py models/base/tiny --drills code --steps 1600

Not a timed test: minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

import torch
from transformers import AutoTokenizer

from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.policy.copy_drill import code_lines, copy_drills
from editcredit.policy.model import new_model, tiny_config

ROOT = Path(__file__).resolve().parent.parent
HELD_OUT = 64


def split_sources(tasks, split: str) -> list[str]:
    """The seed modules' sources of a split's tasks."""
    out = []
    for task in tasks:
        if task.split == split and task.files:
            module = task.meta["seed_function"].split(".", 1)[0]
            out.append(task.files[f"{module}.py"])
    return out


def random_drills(
    pool: list[int],
    separator: int,
    newline: int,
    count: int,
    seed: int,
    context: tuple[int, int] = (24, 64),
):
    """Contexts of ``context`` tokens (24-64) drawn from ``pool``, a separator, then six spans of
    3-12 tokens (at most the context's length less one) cut at random from the context, each
    closed by ``newline`` (loss on the spans)."""
    rng = random.Random(f"{seed}:random-drills")
    drills = []
    for _ in range(count):
        context_ids = [rng.choice(pool) for _ in range(rng.randint(*context))]
        ids, mask = [*context_ids, separator], [0] * (len(context_ids) + 1)
        for _ in range(6):
            size = rng.randint(min(3, len(context_ids) - 1), min(12, len(context_ids) - 1))
            start = rng.randrange(len(context_ids) - size)
            ids += [*context_ids[start : start + size], newline]
            mask += [1] * (size + 1)
        drills.append((ids, mask))
    return drills


def padded(rows, pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(ids) for ids, _ in rows)
    ids = torch.tensor([i + [pad_id] * (width - len(i)) for i, _ in rows], device=device)
    mask = [m + [0] * (width - len(m)) for _, m in rows]
    return ids, torch.tensor(mask, dtype=torch.float, device=device)


def held_out_accuracy(model, rows, pad_id: int, separator: int, newline: int) -> dict:
    """Greedy accuracy on the spans' first tokens and on their later tokens."""
    model.eval()
    right = {"first": 0.0, "continued": 0.0}
    total = {"first": 0.0, "continued": 0.0}
    with torch.no_grad():
        for k in range(0, len(rows), 16):
            ids, mask = padded(rows[k : k + 16], pad_id, model.device)
            hit = (model(ids).logits[:, :-1].argmax(-1) == ids[:, 1:]).float()
            target, before = mask[:, 1:], ids[:, :-1]
            first = target * ((before == newline) | (before == separator)).float()
            for name, where in (("first", first), ("continued", target - first)):
                right[name] += float((hit * where).sum())
                total[name] += float(where.sum())
    model.train()
    return {k: round(right[k] / max(total[k], 1.0), 3) for k in right}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer_dir", help="a base model directory (its tokenizer is used)")
    ap.add_argument("--drills", choices=("code", "random"), default="code")
    ap.add_argument("--steps", type=int, default=1600)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--pool", type=int, default=300, help="random drills: commonest code tokens")
    ap.add_argument("--context", default="24,64", help="random drills: MIN,MAX context tokens")
    ap.add_argument("--warmup", type=int, default=0, help="linear lr warm-up steps")
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--set", action="append", default=[], help="architecture override a=v")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "copy_capacity.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    config = load_config(ROOT / "config" / "config.yaml")
    tok = AutoTokenizer.from_pretrained(args.tokenizer_dir)
    suite = config["models"]["tiny"]["suite"]
    tasks = load_tasks(ROOT / "data" / "frozen" / suite / "tasks.parquet")

    def encode(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False)

    separator, newline = tok.convert_tokens_to_ids("<|im_start|>"), encode("\n")[0]
    train_sources = split_sources(tasks, "train")
    held = copy_drills(split_sources(tasks, "dev"), encode, separator, newline, HELD_OUT, 2)
    count = args.steps * args.batch
    held_random = None
    if args.drills == "code":
        train = copy_drills(train_sources, encode, separator, newline, count, 1)
    else:
        tokens = Counter(t for line in code_lines(train_sources) for t in encode(line))
        pool = [t for t, _ in tokens.most_common(args.pool)]
        low, high = (int(x) for x in args.context.split(","))
        train = random_drills(pool, separator, newline, count, 1, (low, high))
        held_random = random_drills(pool, separator, newline, HELD_OUT, 2, (low, high))
    arch = dict(config["models"]["tiny"]["architecture"])
    arch |= {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
    model = new_model(tiny_config(len(tok), arch, tok.pad_token_id, None, tok.eos_token_id), 0)
    model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    warmup = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / max(args.warmup, 1))
    )
    curve, start, loss = [], time.monotonic(), None
    for step in range(args.steps + 1):
        if step % args.every == 0 or step == args.steps:
            point = {"step": step, "loss": None if loss is None else round(loss, 4)}
            point |= held_out_accuracy(model, held, tok.pad_token_id, separator, newline)
            if held_random is not None:
                on_random = held_out_accuracy(
                    model, held_random, tok.pad_token_id, separator, newline
                )
                point |= {f"random_{k}": v for k, v in on_random.items()}
            point["seconds"] = round(time.monotonic() - start, 1)  # progress, not a figure
            curve.append(point)
            print(json.dumps(point), flush=True)
        if step == args.steps:
            break
        rows = train[step * args.batch : (step + 1) * args.batch]
        ids, mask = padded(rows, tok.pad_token_id, model.device)
        logits = model(ids).logits[:, :-1]
        per_token = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), ids[:, 1:], reduction="none"
        )
        batch_loss = (per_token * mask[:, 1:]).sum() / mask[:, 1:].sum()
        optimizer.zero_grad()
        batch_loss.backward()
        optimizer.step()
        warmup.step()
        loss = batch_loss.item()
    record = {"args": {k: v for k, v in vars(args).items() if k != "out"}, "curve": curve}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
