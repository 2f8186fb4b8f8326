"""What one policy update does to the default base policy, by optimiser and learning rate.

One batch of real rollouts (seed 42's first training step: the draws every arm meets first) goes
through one ``policy_update`` from ``models/base/tiny`` per variant. For each: the mean change of
each sequence's summed log-probability (positive and negative advantages apart), the mean KL of
the updated policy from the base per generated token (how far the step moved the policy), and the
update's norm. Variants at each learning rate:

- ``adamw``: the trainer's optimiser (AdamW, no weight decay);
- ``adamw-random-sign``: the same per-parameter step sizes as AdamW's, with random signs (a step
  of that size that carries no information);
- ``sgd-same-norm``: the plain gradient direction, scaled to AdamW's update norm.

Usage::

    python benchmarks/bench_one_step.py [--lrs 1e-5 1e-4 1e-3 3e-3] [--tasks 8] [--group 8]

Writes benchmarks/out/one_step.json and prints the table. Needs the frozen suite, its controls
and the base model (``snakemake --cores 2 models/base/tiny``).
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from editcredit.config import load_config
from editcredit.policy.base_job import training_tasks
from editcredit.rl.cursor import DataCursor
from editcredit.rl.segment import play_step
from editcredit.rl.step_batch import assemble_step
from editcredit.rl.train_job import train_config
from editcredit.rl.update import UpdateSequence, policy_update
from editcredit.rl.workers import make_workers

ROOT = Path(__file__).resolve().parents[1]


@torch.no_grad()
def token_logps(model, sequences) -> list[torch.Tensor]:
    """Per sequence: the log-softmax at each valid generated position ([n_valid, vocab])."""
    model.eval()
    out = []
    for s in sequences:
        ids = torch.tensor([list(s.token_ids)])
        logits = model(input_ids=ids).logits[0, :-1].float()
        out.append(torch.log_softmax(logits, -1)[torch.as_tensor(s.valid[1:])])
    return out


def measure(model, base_logps, sequences) -> dict[str, float]:
    new = token_logps(model, sequences)
    change, kl, adv = [], [], []
    for s, b, n in zip(sequences, base_logps, new, strict=True):
        ids = torch.tensor(list(s.token_ids))[1:][torch.as_tensor(s.valid[1:])]
        change.append(float((n - b).gather(-1, ids[:, None]).sum()))
        kl.append((b.exp() * (b - n)).sum(-1))
        adv.append(float(s.advantages[s.valid][0]))
    change, adv = np.array(change), np.array(adv)
    pos, neg = adv > 0, adv < 0
    return {
        "pos_change": float(change[pos].mean()),
        "pos_rose": float((change[pos] > 0).mean()),
        "neg_change": float(change[neg].mean()),
        "neg_fell": float((change[neg] < 0).mean()),
        "kl_per_token": float(torch.cat(kl).mean()),
    }


def step_of(model, optimizer_fn, sequences, cfg) -> dict[str, torch.Tensor]:
    """Parameter deltas of one policy_update with the given optimiser (model untouched)."""
    work = copy.deepcopy(model)
    before = {k: v.detach().clone() for k, v in work.named_parameters()}
    policy_update(
        work,
        optimizer_fn(work.parameters()),
        sequences,
        policy_loss=cfg.policy_loss,
        loss_aggregation=cfg.loss_aggregation,
        ppo_clip=cfg.ppo_clip,
        dppo_delta=cfg.dppo_delta,
        temperature=cfg.temperature,
        micro_batch_size=cfg.micro_batch_size,
        micro_batch_tokens=cfg.micro_batch_tokens,
        max_grad_norm=cfg.max_grad_norm,
    )
    return {k: v.detach() - before[k] for k, v in work.named_parameters()}


def applied(model, delta) -> torch.nn.Module:
    out = copy.deepcopy(model)
    with torch.no_grad():
        for k, v in out.named_parameters():
            v.add_(delta[k])
    return out


def norm(delta) -> float:
    return float(torch.sqrt(sum((d.double() ** 2).sum() for d in delta.values())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-5, 1e-4, 1e-3, 3e-3])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = load_config(ROOT / "config" / "config.yaml")
    config["sandbox"]["report_store"] = ""  # the gradings themselves are measured
    training = copy.deepcopy(config["training"])
    training["grpo"].update(tasks_per_step=args.tasks, group_size=args.group)
    cfg = train_config(training, config["agent"], "O", args.seed)
    suite = training["suite"]
    pool = training_tasks(
        str(ROOT / "data" / "frozen" / suite / "tasks.parquet"),
        str(ROOT / "results" / "controls" / suite / "summary.json"),
    )
    base_dir = str(ROOT / "models" / "base" / training["model"])
    workers = make_workers(
        {"enabled": False, "address": "", "num_workers": 1},
        {
            "model_dir": base_dir,
            "agent_cfg": config["agent"],
            "reward_cfg": config["reward"],
            "grading_cfg": config["grading"],
            "sandbox_cfg": config["sandbox"],
            "threads": 2,
            "device": "cpu",
            "generation": config["generation"],
        },
    )
    try:
        by_id = {t.instance_id: t for t in pool}
        rows, queries, _, _ = play_step("O-s42", 1, DataCursor(args.seed), by_id, cfg, workers)
    finally:
        workers.close()
    credit = assemble_step(
        rows,
        queries,
        run="O",
        arm="O",
        lam=0.1,
        c=1.0,
        normalize_std=cfg.normalize_std,
        zero_variance_filter=cfg.zero_variance_filter,
    )
    sequences = [
        UpdateSequence(r["token_ids"], r["logprobs"], v, a, r["instance_id"])
        for r, v, a in zip(rows, credit.valid, credit.advantages, strict=True)
    ]
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    base_logps = token_logps(model, sequences)
    signs = [np.sign(s.advantages[s.valid][0]) for s in sequences if s.valid.any()]
    print(
        f"batch: {len(sequences)} rollouts, {signs.count(1.0)} positive, "
        f"{signs.count(-1.0)} negative, {signs.count(0.0)} zero advantage"
    )
    sgd_unit = step_of(model, lambda p: torch.optim.SGD(p, lr=1.0), sequences, cfg)
    results = []
    for lr in args.lrs:
        adam = step_of(
            model, lambda p, lr=lr: torch.optim.AdamW(p, lr=lr, weight_decay=0.0), sequences, cfg
        )
        g = torch.Generator().manual_seed(1)
        random_sign = {
            k: d.abs() * (torch.randint(0, 2, d.shape, generator=g) * 2 - 1)
            for k, d in adam.items()
        }
        scale = norm(adam) / norm(sgd_unit)
        sgd = {k: d * scale for k, d in sgd_unit.items()}
        for name, delta in (
            ("adamw", adam),
            ("adamw-random-sign", random_sign),
            ("sgd-same-norm", sgd),
        ):
            results.append(
                {
                    "lr": lr,
                    "variant": name,
                    "update_norm": norm(delta),
                    **measure(applied(model, delta), base_logps, sequences),
                }
            )
            print(json.dumps(results[-1]))
    out = ROOT / "benchmarks" / "out" / "one_step.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"seed": args.seed, "rows": results}, indent=2) + "\n")
    print(pd.DataFrame(results).to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
