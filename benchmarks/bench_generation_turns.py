"""Multi-turn generation with and without the kept keys and values (policy.generation), and the
static-cache backend (policy.static_generation), side by side in one run on this machine.

Episodes of ``--turns`` turns: every episode starts from a prompt of about ``--prompt`` tokens;
each turn samples a reply and appends it and an observation of about ``--observation`` tokens,
as the rollout loop does. The same episodes are played twice with the same seeds by a tiny
random policy of the default's shape (``--positions`` positions): once encoding every prompt
whole each turn (the baseline, ``keys`` not given), once with each episode's keys and values
kept between turns; and a third time by the static-cache backend (each distinct prompt encoded
alone, every row decoded over one preallocated cache; keys kept). ``--samples k`` repeats each
first prompt k times, as a task's samples or a group's rollouts do. Reports the seconds of each,
their ratios, and the share of replies each agrees with the first on (they differ only where
floating-point sums in another order flip a sample).
Usage::

    python benchmarks/bench_generation_turns.py [--episodes 64] [--turns 8] [--threads 2]

Writes benchmarks/out/generation_turns.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch
from synthetic import fresh_default_policy

from editcredit.policy.generation import TransformersGenerator
from editcredit.policy.static_generation import StaticCacheGenerator

ROOT = Path(__file__).resolve().parents[1]
VOCAB = 2048
PAD = 0


def play(gen, args, keep: bool) -> tuple[float, list[list[int]]]:
    """Play the episodes; returns the seconds spent in generation and every reply's ids."""
    rng = random.Random(args.seed)
    firsts = [
        [rng.randrange(2, VOCAB) for _ in range(rng.randint(args.prompt // 2, args.prompt))]
        for _ in range(-(-args.episodes // args.samples))
    ]
    prompts = [list(firsts[i // args.samples]) for i in range(args.episodes)]
    replies, seconds = [], 0.0
    for turn in range(args.turns):
        keys = {"keys": list(range(len(prompts)))} if keep else {}
        clock = time.perf_counter()
        outputs = gen.generate(prompts, args.max_new_tokens, 1.0, seed=turn, **keys)
        seconds += time.perf_counter() - clock
        replies += [o.token_ids for o in outputs]
        for prompt, out in zip(prompts, outputs, strict=True):
            n = rng.randint(args.observation // 2, args.observation)
            prompt += out.token_ids + [rng.randrange(2, VOCAB) for _ in range(n)]
    gen.release()
    return seconds, replies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=600)
    ap.add_argument("--observation", type=int, default=120)
    ap.add_argument("--max-new-tokens", type=int, default=24)
    ap.add_argument("--positions", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--samples", type=int, default=1, help="episodes per first prompt")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = fresh_default_policy(VOCAB, PAD, 1, args.positions).eval()
    stops = tuple(range(1, VOCAB, 16))  # replies of a few to a few dozen ids, as the agent's
    whole, whole_replies = play(TransformersGenerator(model, stops, PAD), args, keep=False)
    kept, kept_replies = play(TransformersGenerator(model, stops, PAD), args, keep=True)
    static, static_replies = play(StaticCacheGenerator(model, stops, PAD), args, keep=True)

    def same(replies):
        agree = sum(a == b for a, b in zip(whole_replies, replies, strict=True))
        return f"{agree} of {len(replies)}"

    record = {
        "settings": vars(args),
        "whole_prompt_s": round(whole, 2),
        "kept_prefix_s": round(kept, 2),
        "static_cache_s": round(static, 2),
        "speedup": round(whole / kept, 2),
        "static_over_kept": round(kept / static, 2),
        "identical_replies": same(kept_replies),
        "identical_replies_static": same(static_replies),
    }
    out = ROOT / "benchmarks" / "out" / "generation_turns.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
