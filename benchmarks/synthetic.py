"""Synthetic inputs for the benchmarks: update sequences (random tokens and log-probs, advantages
on the generated tokens) and a fresh policy of the tiny default's shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from editcredit.rl.update import UpdateSequence

ROOT = Path(__file__).resolve().parents[1]


def fresh_default_policy(vocab: int, pad_id: int, eos_id: int, positions: int, seed: int = 0):
    """A randomly initialised policy of ``models.tiny.architecture`` in config/config.yaml, with
    ``positions`` positions and ``vocab`` tokens."""
    from editcredit.config import load_config
    from editcredit.policy.model import new_model, tiny_config

    arch = dict(load_config(ROOT / "config" / "config.yaml")["models"]["tiny"]["architecture"])
    arch["max_positions"] = positions
    return new_model(tiny_config(vocab, arch, pad_id, None, eos_id), seed=seed)


def update_sequences(masks: list[np.ndarray], vocab: int, groups: int) -> list[UpdateSequence]:
    """One sequence per generated-token mask (its length is the mask's), in ``groups`` groups."""
    rng = np.random.default_rng(0)
    return [
        UpdateSequence(
            token_ids=rng.integers(2, vocab, len(mask)).tolist(),
            logprobs=(-rng.random(len(mask))).tolist(),
            valid=mask,
            advantages=np.where(mask, rng.normal(size=len(mask)), 0.0),
            group=f"g{i % groups}",
        )
        for i, mask in enumerate(masks)
    ]
