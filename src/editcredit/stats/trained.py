"""Trained vs untrained tasks: a paired comparison split by what the runs trained on (METHOD §9).

On an eval set that holds training tasks (the broad set), a task is *trained* for a paired seed
when every compared run of that seed (``{A}-s{seed}``, ``{B}-s{seed}``) has it in its training
rollouts, *untrained* when none has, and *partly trained* when only some have (counted, in
neither part). Runs of different seeds draw different tasks, so a part is a set of (seed, task)
cells, not a set of columns: its difference is the mean over the part's tasks within each seed,
averaged equally over the seeds that have any; its CI resamples the tasks within each seed, the
seeds fixed (:func:`~editcredit.stats.bootstrap.stratified_ci`). With one paired seed that is the
task-only CI of the part.

Pure functions: task sets in, JSON-ready records out.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import stratified_ci
from editcredit.stats.records import PartRecord

__all__ = ["TaskSplit", "part_record", "split_tasks"]

NO_TASKS = "no tasks in this part"


@dataclass(frozen=True)
class TaskSplit:
    """The tasks of one paired seed by what its compared runs trained on (each in task order).

    Attributes:
        trained: tasks in the training rollouts of every compared run.
        untrained: tasks in the training rollouts of none of them.
        partly: tasks some but not all of them trained on (in neither part).
    """

    trained: tuple[str, ...]
    untrained: tuple[str, ...]
    partly: tuple[str, ...]


def split_tasks(tasks: Sequence[str], trained_by_run: Sequence[Iterable[str]]) -> TaskSplit:
    """Split ``tasks`` by the training tasks of the compared runs of one seed.

    Args:
        tasks: the eval set's tasks, in order.
        trained_by_run: per compared run, the tasks in its training rollouts.

    Raises:
        ValueError: when no run is given.
    """
    sets = [set(map(str, s)) for s in trained_by_run]
    if not sets:
        raise ValueError("split_tasks: no compared run given")
    trained: list[str] = []
    untrained: list[str] = []
    partly: list[str] = []
    for task in tasks:
        hits = sum(task in s for s in sets)
        (trained if hits == len(sets) else untrained if hits == 0 else partly).append(task)
    return TaskSplit(tuple(trained), tuple(untrained), tuple(partly))


def part_record(
    a: ArmScores,
    b: ArmScores,
    tasks_by_seed: Mapping[Hashable, Sequence[str]],
    *,
    n_resamples: int,
    rng_seed: int,
    level: float,
    label: str,
) -> PartRecord:
    """The paired difference A - B over one part's (seed, task) cells, with its CI.

    Args:
        a, b: the arms' scores on the eval set (same seeds and tasks).
        tasks_by_seed: per seed of ``a``, the part's tasks at that seed (may be empty).
        n_resamples, rng_seed, level: the bootstrap (config ``stats.bootstrap``).
        label: e.g. ``"M - B (trained)"``.

    Returns:
        ``n_tasks`` (distinct tasks over the seeds), ``n_cells``, ``tasks_by_seed`` (counts),
        ``note`` and ``comparison``: ``None`` for an empty part, else the difference (``None``
        while a cell is unresolved, with the bounds ``[A_lo - B_hi, A_hi - B_lo]`` averaged the
        same way), the CI and its half-width, and wins / losses / ties over the cells.
    """
    unknown = [s for s in tasks_by_seed if s not in a.seeds]
    if unknown:
        raise ValueError(f"{label}: seed(s) {unknown} are not paired seeds {list(a.seeds)}")
    counts = {str(s): len(tasks_by_seed.get(s, ())) for s in a.seeds}
    seeds = [s for s in a.seeds if tasks_by_seed.get(s)]
    distinct = {t for s in seeds for t in tasks_by_seed[s]}
    out: PartRecord = {
        "n_tasks": len(distinct),
        "n_cells": sum(counts.values()),
        "tasks_by_seed": counts,
        "note": "" if seeds else NO_TASKS,
        "comparison": None,
    }
    if not seeds:
        return out
    pairs = [
        (a.subset(seeds=[s], tasks=tasks_by_seed[s]), b.subset(seeds=[s], tasks=tasks_by_seed[s]))
        for s in seeds
    ]
    resolved = all(x.resolved and y.resolved for x, y in pairs)
    if not resolved:
        lower = float(np.mean([x.lower.mean() - y.upper.mean() for x, y in pairs]))
        upper = float(np.mean([x.upper.mean() - y.lower.mean() for x, y in pairs]))
        out["comparison"] = {
            "label": label,
            "resolved": resolved,
            "n_seeds": len(seeds),
            "n_cells": out["n_cells"],
            "seeds": list(seeds),
            "difference": None,
            "difference_lower": lower,
            "difference_upper": upper,
            "ci": None,
            "half_width": None,
            "wins": None,
            "losses": None,
            "ties": None,
        }
        return out
    strata = [x.values[0] - y.values[0] for x, y in pairs]
    ci = stratified_ci(strata, n_resamples=n_resamples, rng_seed=rng_seed, level=level)
    cells = np.concatenate(strata)
    out["comparison"] = {
        "label": label,
        "resolved": resolved,
        "n_seeds": len(seeds),
        "n_cells": out["n_cells"],
        "seeds": list(seeds),
        "difference": ci.estimate,
        "difference_lower": ci.estimate,
        "difference_upper": ci.estimate,
        "ci": ci.to_dict(),
        "half_width": ci.half_width,
        "wins": int((cells > 0).sum()),
        "losses": int((cells < 0).sum()),
        "ties": int((cells == 0).sum()),
    }
    return out
