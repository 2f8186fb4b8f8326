"""Which stored gradings the replay check re-grades: a pure, order-free choice by hash.

Every stored grading has a key unique in the study (``final:{rollout_key}``,
``counterfactual:{rollout_key}``). The keys are ordered by ``sha256(key)`` (ties, which do not
happen, by the key) and the first :func:`sample_size` are taken: the sample depends on the set
of keys only, never on the order the files were read in, and a grading chosen in a study stays
chosen when the study grows by as many keys as the sample does.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

__all__ = ["choose", "sample_order", "sample_size"]


def sample_size(stored: int, fraction: float, minimum: int) -> int:
    """``max(ceil(fraction x stored), minimum)``, at most ``stored``.

    ``fraction x stored`` is rounded to 9 decimals before the ceiling, so that 5 % of 100 is 5
    (the float product is 5.000000000000001)."""
    if stored < 0:
        raise ValueError(f"replay: stored gradings must be >= 0, got {stored}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"config replay.fraction: {fraction} is not in [0, 1]")
    if minimum < 0:
        raise ValueError(f"config replay.minimum: {minimum} is negative")
    return min(stored, max(math.ceil(round(fraction * stored, 9)), minimum))


def sample_order(key: str) -> str:
    """The hex SHA256 of ``key``: the order in which keys enter the sample."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def choose(keys: Iterable[str], fraction: float, minimum: int) -> list[str]:
    """The keys of the sample, in sample order. A key given twice is refused by name (the keys
    identify gradings; two gradings under one key would make the choice ambiguous)."""
    keys = list(keys)
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"replay: the stored grading {key!r} is listed twice")
        seen.add(key)
    ordered = sorted(keys, key=lambda k: (sample_order(k), k))
    return ordered[: sample_size(len(keys), fraction, minimum)]
