"""Training-side encounter analysis (METHOD §9).

Per task: pass rate at its k-th encounter in training minus its pass rate at the first
encounter; then the mean over tasks with a one-dimensional bootstrap CI over tasks. Tasks that
were not encountered k times do not enter the mean; they are counted in the record. Beside it:
the last encounter minus the first for tasks seen at least three times, and each mean again
with its single most influential task left out (a mean carried by one task shows there).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.stats._records import record_to_dict
from editcredit.stats.bootstrap import BootstrapCI, mean_ci

__all__ = [
    "EncounterEffect",
    "encounter_differences",
    "encounter_effect",
    "last_encounter_differences",
    "most_influential",
]


@dataclass(frozen=True)
class EncounterEffect:
    """Mean over tasks of (pass rate at the k-th encounter - pass rate at the first).

    Attributes:
        k: the encounter compared with the first (k >= 2).
        tasks: tasks with both encounters, in order of first appearance.
        task_differences: their differences, aligned with ``tasks``.
        n_tasks_without_kth: tasks seen in training fewer than k times (not in the mean).
        ci: bootstrap CI over tasks; ``None`` when no task has a k-th encounter.
    """

    k: int
    tasks: tuple[str, ...]
    task_differences: tuple[float, ...]
    n_tasks_without_kth: int
    ci: BootstrapCI | None

    @property
    def mean_difference(self) -> float | None:
        """Mean of the per-task differences; ``None`` when there are none."""
        return None if self.ci is None else self.ci.estimate

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields, plus ``mean_difference``."""
        out = record_to_dict(self)
        out["mean_difference"] = self.mean_difference
        return out


def encounter_differences(
    tasks: Sequence[Hashable],
    encounters: Sequence[int],
    pass_rates: Sequence[float],
    *,
    k: int,
) -> tuple[tuple[str, ...], tuple[float, ...], int]:
    """Per-task ``rate[k] - rate[1]`` from parallel columns, one row per (task, encounter).

    Args:
        tasks: task id of each row.
        encounters: 1-based encounter number of the task in that row.
        pass_rates: pass rate of the task's group at that encounter, in [0, 1] (masked rollouts
            already excluded by the caller).
        k: the encounter to compare with the first, >= 2.

    Returns:
        (tasks with both encounters, their differences, number of tasks lacking one of them).

    Raises:
        ValueError: on ragged columns, an encounter number < 1, a rate outside [0, 1] or not
            finite, or a repeated (task, encounter); the message names the row.
    """
    if k < 2:
        raise ValueError(f"k must be >= 2 (the first encounter is the baseline), got {k}")
    rates = _rates_by_task(tasks, encounters, pass_rates)
    kept = [(t, r[k] - r[1]) for t, r in rates.items() if 1 in r and k in r]
    return (
        tuple(str(t) for t, _ in kept),
        tuple(d for _, d in kept),
        len(rates) - len(kept),
    )


def last_encounter_differences(
    tasks: Sequence[Hashable],
    encounters: Sequence[int],
    pass_rates: Sequence[float],
    *,
    min_encounters: int = 3,
) -> tuple[tuple[str, ...], tuple[float, ...], int]:
    """Per-task ``rate[last] - rate[1]`` for tasks encountered at least ``min_encounters`` times
    (their last encounter is then at least the ``min_encounters``-th); same columns, checks and
    return shape as :func:`encounter_differences`."""
    if min_encounters < 2:
        raise ValueError(f"min_encounters must be >= 2, got {min_encounters}")
    rates = _rates_by_task(tasks, encounters, pass_rates)
    kept = [(t, r[max(r)] - r[1]) for t, r in rates.items() if 1 in r and len(r) >= min_encounters]
    return (
        tuple(str(t) for t, _ in kept),
        tuple(d for _, d in kept),
        len(rates) - len(kept),
    )


def most_influential(tasks: Sequence[str], differences: Sequence[float]) -> tuple[str, int] | None:
    """The task whose removal moves the mean of ``differences`` the most (the one farthest from
    the mean; the first in order on ties) and its index; None with fewer than two tasks."""
    if len(differences) < 2:
        return None
    mean = sum(differences) / len(differences)
    index = max(range(len(differences)), key=lambda i: (abs(differences[i] - mean), -i))
    return str(tasks[index]), index


def _rates_by_task(
    tasks: Sequence[Hashable], encounters: Sequence[int], pass_rates: Sequence[float]
) -> dict[Hashable, dict[int, float]]:
    """Task -> encounter -> pass rate, with the columns checked (see encounter_differences)."""
    if not len(tasks) == len(encounters) == len(pass_rates):
        raise ValueError(
            f"columns differ in length: tasks={len(tasks)}, encounters={len(encounters)}, "
            f"pass_rates={len(pass_rates)}"
        )
    rates: dict[Hashable, dict[int, float]] = {}
    for row, (task, enc, rate) in enumerate(zip(tasks, encounters, pass_rates, strict=True)):
        where = f"row {row} (task={task!r}, encounter={enc!r})"
        if isinstance(enc, bool) or int(enc) != enc or enc < 1:
            raise ValueError(f"{where}: encounter must be an integer >= 1")
        value = float(rate)
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"{where}: pass rate {rate!r} is not in [0, 1]")
        per_task = rates.setdefault(task, {})
        if int(enc) in per_task:
            raise ValueError(f"{where}: duplicate (task, encounter)")
        per_task[int(enc)] = value
    return rates


def encounter_effect(
    tasks: Sequence[Hashable],
    encounters: Sequence[int],
    pass_rates: Sequence[float],
    *,
    k: int,
    n_resamples: int,
    rng_seed: int,
    level: float,
) -> EncounterEffect:
    """Encounter analysis: per-task differences (see :func:`encounter_differences`), their mean
    and its percentile bootstrap CI over tasks (:func:`~editcredit.stats.bootstrap.mean_ci`)."""
    kept_tasks, diffs, n_without = encounter_differences(tasks, encounters, pass_rates, k=k)
    ci = mean_ci(diffs, n_resamples=n_resamples, rng_seed=rng_seed, level=level) if diffs else None
    return EncounterEffect(
        k=k,
        tasks=kept_tasks,
        task_differences=diffs,
        n_tasks_without_kth=n_without,
        ci=ci,
    )
