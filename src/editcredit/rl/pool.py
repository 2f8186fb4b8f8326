"""The training pool: which train tasks every run of the study trains on (rule training_pool).

The candidates are the first ``training.pool_screen.candidates`` eligible train tasks in
SHA256(instance_id) order. Without a screen the pool is the first ``training.pool_size`` of the
eligible tasks (:func:`editcredit.rl.cursor.pool_of_size`). With one, the base policy plays
``samples`` episodes of each candidate and the pool is the first ``pool_size`` candidates, in the
same order, that it solved in some but not all of them: a task the base always or never solves
gives a GRPO group no reward difference to learn from. The screen is played once, before any
run, by the base policy alone, so the pool is the same for every arm and seed and depends on no
run's result. Its rollouts and counts are kept beside the pool (``results/training/``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from editcredit.rl.cursor import pool_of_size

#: The key prefix of the screen's episodes (their sampling seeds derive from it).
SCREEN_KEY = "pool-screen"


def screen_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per task, its unmasked episodes and how many of them resolved it (``Y`` 1)."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        count = counts.setdefault(row["instance_id"], {"episodes": 0, "solved": 0})
        if not row["masked"]:
            count["episodes"] += 1
            count["solved"] += int(row["Y"] == 1)
    return counts


def learnable(count: Mapping[str, int]) -> bool:
    """Solved in some but not all of at least two unmasked episodes."""
    return count["episodes"] >= 2 and 0 < count["solved"] < count["episodes"]


def screened_pool(
    candidates: Sequence[str], counts: Mapping[str, Mapping[str, int]], size: int
) -> list[str]:
    """The first ``size`` of ``candidates`` (in their order) that are :func:`learnable`.
    Fewer than ``size`` is an error naming how many were and what to change."""
    kept = [c for c in candidates if c in counts and learnable(counts[c])]
    if len(kept) < size:
        raise ValueError(
            f"training pool screen: {len(kept)} of {len(candidates)} candidates were solved in "
            f"some but not all of their episodes, fewer than training.pool_size ({size}); "
            "raise training.pool_screen.candidates or lower pool_size"
        )
    return kept[:size]


def screen_candidates(task_ids: Sequence[str], candidates: int) -> list[str]:
    """The first ``candidates`` task ids in SHA256(instance_id) order."""
    return pool_of_size(list(task_ids), int(candidates))


def read_pool(path: str | Path, eligible: Sequence[Any], pool_size: int) -> list[Any]:
    """The tasks of the pool file ``path`` (rule training_pool), taken from ``eligible``
    (the eligible train tasks). A pool of another size or naming a task that is not eligible
    (quarantined since, say) fails naming the file."""
    record = json.loads(Path(path).read_text())
    ids = list(record["pool"])
    if int(record.get("pool_size", len(ids))) != int(pool_size):
        raise ValueError(
            f"{path}: made for training.pool_size {record.get('pool_size')}, the config says "
            f"{pool_size}; make the pool again (rule training_pool)"
        )
    by_id = {t.instance_id: t for t in eligible}
    missing = sorted(set(ids) - set(by_id))
    if missing:
        raise ValueError(f"{path}: pool tasks not among the eligible train tasks: {missing}")
    return [by_id[i] for i in ids]
