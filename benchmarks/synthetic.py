"""Synthetic update sequences for the benchmarks: random tokens and log-probs, advantages on the
generated tokens."""

from __future__ import annotations

import numpy as np

from editcredit.rl.update import UpdateSequence


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
