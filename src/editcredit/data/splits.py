"""Deterministic train/dev/holdout splits by a hash of the seed function."""

from __future__ import annotations

import hashlib

SPLITS = ("train", "dev", "holdout")


def unit_hash(key: str) -> float:
    """A number in [0, 1) from the SHA256 of ``key``."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign_split(group_key: str, fractions: dict[str, float]) -> str:
    """Split of a group (all bugs of one seed function share ``group_key``)."""
    missing = [s for s in SPLITS if s not in fractions]
    if missing:
        raise ValueError(f"split fractions lack {missing}")
    total = sum(fractions[s] for s in SPLITS)
    if abs(total - 1.0) > 1e-9 or any(fractions[s] < 0 for s in SPLITS):
        raise ValueError(f"split fractions must be >= 0 and sum to 1, got {fractions}")
    u, edge = unit_hash(group_key), 0.0
    for split in SPLITS:
        edge += fractions[split]
        if u < edge:
            return split
    return SPLITS[-1]
