"""Per-(training seed, task) scores of one arm on one eval set: the input of a paired comparison.

Each cell holds the task score of the model (arm, seed) on that task, as an interval
``[lower, upper]`` that is a single point once all of the task's slots are resolved.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from editcredit.stats._records import record_to_dict
from editcredit.stats.scores import EvalSetScore

__all__ = ["ArmScores"]


def _frozen_matrix(values: ArrayLike, name: str, shape: tuple[int, int]) -> np.ndarray:
    arr = np.array(values, dtype=np.float64)  # a copy, so the caller's array can't alter it
    if arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}, expected (seeds, tasks) = {shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        s, t = bad[0]
        raise ValueError(f"{name}[seed={s}, task={t}] is not finite (use bounds for unresolved)")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class ArmScores:
    """Task scores of one arm: seeds x tasks matrices of lower and upper bounds.

    Attributes:
        arm: arm name, e.g. ``"M"``.
        seeds: training seeds (rows), in order.
        tasks: task ids (columns), in order.
        lower: per (seed, task) lower bound of the task score (read-only array).
        upper: per (seed, task) upper bound; equal to ``lower`` where resolved.
    """

    arm: str
    seeds: tuple[Hashable, ...]
    tasks: tuple[str, ...]
    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        shape = (len(self.seeds), len(self.tasks))
        if shape[0] < 1 or shape[1] < 1:
            raise ValueError(f"arm {self.arm!r}: needs at least one seed and one task")
        if len(set(self.seeds)) != shape[0] or len(set(self.tasks)) != shape[1]:
            raise ValueError(f"arm {self.arm!r}: duplicate seed or task label")
        lower = _frozen_matrix(self.lower, f"arm {self.arm!r} lower", shape)
        upper = _frozen_matrix(self.upper, f"arm {self.arm!r} upper", shape)
        bad = np.argwhere(lower > upper)
        if bad.size:
            s, t = bad[0]
            raise ValueError(f"arm {self.arm!r}: lower > upper at seed={s}, task={t}")
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def from_values(
        cls, arm: str, values: ArrayLike, *, seeds: Sequence[Hashable], tasks: Sequence[str]
    ) -> ArmScores:
        """Fully resolved scores: one value per (seed, task)."""
        # __post_init__ turns the array-like bounds into read-only matrices
        matrix = cast(np.ndarray, values)
        return cls(arm=arm, seeds=tuple(seeds), tasks=tuple(tasks), lower=matrix, upper=matrix)

    @classmethod
    def from_eval_scores(cls, arm: str, by_seed: Mapping[Hashable, EvalSetScore]) -> ArmScores:
        """Assemble from one :class:`EvalSetScore` per training seed (same eval set, same tasks)."""
        if not by_seed:
            raise ValueError(f"arm {arm!r}: no seeds given")
        seeds = tuple(by_seed)
        tasks = by_seed[seeds[0]].tasks
        for seed in seeds:
            if by_seed[seed].tasks != tasks:
                raise ValueError(
                    f"arm {arm!r}: seed {seed!r} has a different task list than seed {seeds[0]!r}"
                )
        return cls(
            arm=arm,
            seeds=seeds,
            tasks=tasks,
            # rows of bounds: __post_init__ makes them the read-only matrices
            lower=cast(np.ndarray, [by_seed[s].task_lower for s in seeds]),
            upper=cast(np.ndarray, [by_seed[s].task_upper for s in seeds]),
        )

    @property
    def resolved(self) -> bool:
        """True when every cell is a point (no unresolved slot anywhere)."""
        return bool(np.array_equal(self.lower, self.upper))

    @property
    def values(self) -> np.ndarray:
        """The (seeds x tasks) point scores; raises while any slot is unresolved."""
        if not self.resolved:
            raise ValueError(f"arm {self.arm!r} has unresolved slots: only bounds exist")
        return self.lower

    def subset(
        self, *, seeds: Sequence[Hashable] | None = None, tasks: Sequence[str] | None = None
    ) -> ArmScores:
        """The same arm restricted to (and reordered by) the given seeds and/or tasks.

        Use it for a single-seed contrast (``seeds=[42]``) and the in-pool/out-of-pool split.
        """
        seeds = self.seeds if seeds is None else tuple(seeds)
        tasks = self.tasks if tasks is None else tuple(tasks)
        rows = _positions(self.seeds, seeds, f"arm {self.arm!r} seed")
        cols = _positions(self.tasks, tasks, f"arm {self.arm!r} task")
        return ArmScores(
            arm=self.arm,
            seeds=seeds,
            tasks=tasks,
            lower=self.lower[np.ix_(rows, cols)],
            upper=self.upper[np.ix_(rows, cols)],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields, plus ``resolved``."""
        out = record_to_dict(self)
        out["resolved"] = self.resolved
        return out


def _positions(have: tuple[Hashable, ...], want: Sequence[Hashable], what: str) -> list[int]:
    index = {label: i for i, label in enumerate(have)}
    missing = [label for label in want if label not in index]
    if missing:
        raise ValueError(f"{what}(s) not present: {missing[:5]!r}")
    return [index[label] for label in want]
