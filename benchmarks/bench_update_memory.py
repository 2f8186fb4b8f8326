"""Peak memory and time of one policy update on long agent-like sequences, against transformers'
own LM-loss step on the same tokens.

Agent trajectories are mostly prompt and observations: here each sequence of ``--tokens`` tokens
has ``--valid`` of them generated. Variants, each in a child process of its own (so its peak-RSS
increase over the loaded model is its own):

- ``plain_lm``: ``model(input_ids, labels=input_ids).loss`` (vocabulary-wide logits everywhere);
- ``update``: ``policy_update`` (logits only where a generated token is predicted);
- ``update_ckpt``: the same with activation checkpointing;
- ``update_ckpt_cap``: and a cap of ``--tokens`` padded tokens per micro-batch.

Usage: ``python benchmarks/bench_update_memory.py [--sequences 8] [--tokens 2048]`` (CPU or one
GPU: on CUDA the peak is ``torch.cuda.max_memory_allocated``). Writes
``benchmarks/out/update_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("plain_lm", "update", "update_ckpt", "update_ckpt_cap")
ARCH = dict(vocab_size=32000, hidden_size=256, intermediate_size=1024, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2)  # fmt: skip


def _peak_mib(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(variant: str, sequences: int, tokens: int, valid: float) -> dict:
    import numpy as np
    import torch
    from synthetic import update_sequences
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from editcredit.policy.model import enable_activation_checkpointing
    from editcredit.rl.update import policy_update

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    cfg = Qwen2Config(**ARCH, max_position_embeddings=tokens, pad_token_id=0, eos_token_id=1)
    model = Qwen2ForCausalLM(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    mask = np.zeros(tokens, dtype=bool)
    for turn in np.array_split(np.arange(1, tokens), 8):  # 8 turns: generated, then observation
        mask[turn[: int(len(turn) * valid)]] = True
    seqs = update_sequences([mask] * sequences, ARCH["vocab_size"], groups=2)
    if variant.startswith("update_ckpt"):
        enable_activation_checkpointing(model)
    ids = torch.tensor([s.token_ids for s in seqs], device=device)

    def step() -> None:
        if variant == "plain_lm":
            model.train()
            opt.zero_grad(set_to_none=True)
            for start in range(0, sequences, 4):
                mb = ids[start : start + 4]
                with torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
                    model(input_ids=mb, labels=mb).loss.backward()
            opt.step()
            return
        policy_update(
            model, opt, seqs, policy_loss="dppo_binary_tv", loss_aggregation="prompt_mean",
            ppo_clip=0.2, dppo_delta=0.15, temperature=1.0, micro_batch_size=4,
            micro_batch_tokens=tokens if variant.endswith("cap") else 0, max_grad_norm=1.0,
        )  # fmt: skip

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = _peak_mib(device)
    t = time.perf_counter()
    step()
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    return {"device": device, "seconds": seconds, "peak_increase_mib": _peak_mib(device) - before}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sequences", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--valid", type=float, default=0.25, help="generated share of each turn")
    ap.add_argument("--child", choices=VARIANTS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.sequences, args.tokens, args.valid)))
        return
    out = {"sequences": args.sequences, "tokens": args.tokens, "valid": args.valid, "arch": ARCH}
    for variant in VARIANTS:
        cmd = [sys.executable, __file__, "--child", variant, "--sequences", str(args.sequences),
               "--tokens", str(args.tokens), "--valid", str(args.valid)]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, check=True)
        out[variant] = json.loads(run.stdout.strip().splitlines()[-1])
        print(variant, out[variant], flush=True)
    base = out["plain_lm"]
    for variant in VARIANTS[1:]:
        out[f"{variant}_vs_plain_lm"] = {
            "peak": out[variant]["peak_increase_mib"] / base["peak_increase_mib"],
            "seconds": out[variant]["seconds"] / base["seconds"],
        }
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "update_memory.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k.endswith("_vs_plain_lm")}, indent=1))


if __name__ == "__main__":
    main()
