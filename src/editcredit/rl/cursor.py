"""The data cursor: which training tasks each step draws, resumable from a small JSON record.

Tasks are visited epoch by epoch; each epoch is a permutation of the pool ordered by
``sha256(f"{seed}:{epoch}:{instance_id}")``, so the order depends only on the seed and the pool,
never on results. A step takes the next ``tasks_per_step`` tasks, crossing into the next epoch
when one runs out.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from editcredit.io.hashing import sha256_text


def pool_of_size(task_ids: list[str], size: int) -> list[str]:
    """The first ``size`` of ``task_ids`` in SHA256(instance_id) order (all of them when
    ``size`` is 0 or at least their number), in that order: the same for every arm and seed,
    fixed before anything is played. It is the order in which an eval set with ``max_tasks``
    keeps its tasks, so the pool's tasks come first among the broad set's train tasks (its
    trained and untrained parts)."""
    if size < 0:
        raise ValueError(f"config training.pool_size: {size} is negative")
    ordered = sorted(task_ids, key=sha256_text)
    return ordered[:size] if size else ordered


def epoch_order(pool: list[str], seed: int, epoch: int) -> list[str]:
    def key(instance_id: str) -> str:
        return hashlib.sha256(f"{seed}:{epoch}:{instance_id}".encode()).hexdigest()

    return sorted(pool, key=key)


@dataclass(frozen=True)
class DataCursor:
    """Position in the task stream: ``epoch`` and ``position`` inside that epoch's order."""

    seed: int
    epoch: int = 0
    position: int = 0

    def take(self, pool: list[str], n: int) -> tuple[list[str], DataCursor]:
        """The next ``n`` distinct tasks and the cursor after them."""
        if not pool:
            raise ValueError("the training pool is empty")
        if n > len(pool):
            raise ValueError(f"tasks_per_step {n} exceeds the training pool ({len(pool)} tasks)")
        out: list[str] = []
        epoch, position = self.epoch, self.position
        while len(out) < n:
            order = epoch_order(sorted(pool), self.seed, epoch)
            if position >= len(order):
                epoch, position = epoch + 1, 0
                continue
            if order[position] not in out:  # an epoch boundary may repeat a task: skip it
                out.append(order[position])
            position += 1
        return out, DataCursor(self.seed, epoch, position)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, int]) -> DataCursor:
        return cls(int(d["seed"]), int(d["epoch"]), int(d["position"]))
