"""How many tasks the candidate list can solve: the share whose gold fix is on it.

The minibugs environment with ``agent.candidates`` lists single-line reversals that the suite's
own mutation operators (and ``not x`` -> ``x``) can write in the seed function(s), and the
action ``try <k>`` applies one (``agent/candidates.py``). A policy that acts by ``try`` alone
selects among those candidates, so a task whose fix is not on the list cannot be solved that
way. This module counts, from a frozen suite's task records and the environment's own list
function alone (no grading, deterministic), per split and per number of planted bugs: the
tasks, those whose gold tree is reachable by tries (:func:`fix_on_list`), their share, and the
list's length (median, max).

Reachable means *exactly* the gold tree: under ``agent.try_scope: file`` one candidate whose
tree is the task's tree with its gold patch applied; under ``function`` one candidate per
planted bug whose try at its function writes that bug's gold fix, the tries together writing
the gold tree. A candidate that passes the tests by another line is not counted.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from editcredit.agent.candidates import Candidate, tree_with, tried_at_location
from editcredit.data.block_truth import apply_patch
from editcredit.data.task import Task

__all__ = [
    "CoverageRow",
    "coverage_rows",
    "fix_on_list",
    "suite_coverage",
]

#: The environment's list function: (task, try_scope) -> the numbered candidates it shows.
ListFunction = Callable[[Task, str], list[Candidate]]

#: The order splits are shown in; others follow, sorted.
SPLIT_ORDER = ("train", "dev", "holdout")


@dataclass(frozen=True)
class CoverageRow:
    """One (split, number of bugs) cell of a suite; ``split`` 'all' and ``bugs`` 0: every task."""

    suite: str
    split: str
    bugs: int
    tasks: int
    covered: int
    """Tasks whose gold tree is reachable by tries of listed candidates."""
    share: float
    median_length: float
    max_length: int


def fix_on_list(task: Task, candidates: list[Candidate], try_scope: str) -> bool:
    """Whether tries of ``candidates`` (the task's list under ``try_scope``) reach exactly the
    task's gold tree (its ``patch`` applied to its inline tree); False for an image task."""
    if task.files is None:
        return False
    files = dict(task.files)
    gold = apply_patch(files, task.patch)
    if try_scope == "file":  # a try replaces every earlier one: one candidate must be the fix
        return any(_tree_after(files, files, c, try_scope) == gold for c in candidates)
    tree = dict(files)  # tries at different functions accumulate: one candidate per bug
    for patch in [b.patch for b in task.bugs] if task.bugs else [task.patch]:
        fixed = apply_patch(files, patch)
        hit = next(
            (c for c in candidates if _tree_after(files, files, c, try_scope) == fixed), None
        )
        if hit is None:
            return False
        tree = _tree_after(files, tree, hit, try_scope)
    return tree == gold


def _tree_after(
    files: dict[str, str], current: dict[str, str], candidate: Candidate, try_scope: str
) -> dict[str, str]:
    """The tree after ``try`` of ``candidate`` on ``current`` (the environment's rule)."""
    path = candidate.path
    if try_scope == "file":
        text = tree_with(files, candidate)
    else:
        text = tried_at_location(files, current[path], candidate)
    return {**current, path: text}


def coverage_rows(
    suite: str, tasks: Iterable[Task], try_scope: str, listed: ListFunction
) -> list[CoverageRow]:
    """Rows per (split, number of bugs) in :data:`SPLIT_ORDER`, then the suite's total (split
    'all', bugs 0). ``listed`` is the environment's list function
    (:func:`editcredit.agent.candidates.listed_candidates`)."""
    cells: dict[tuple[str, int], list[tuple[bool, int]]] = {}
    for task in tasks:
        shown = listed(task, try_scope)
        key = (task.split, len(task.bugs) if task.bugs else 1)
        cells.setdefault(key, []).append((fix_on_list(task, shown, try_scope), len(shown)))

    def order(key: tuple[str, int]) -> tuple[int, str, int]:
        split, bugs = key
        rank = SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER)
        return rank, split, bugs

    rows = [
        _row(suite, split, bugs, cells[(split, bugs)]) for split, bugs in sorted(cells, key=order)
    ]
    every = [cell for key in cells for cell in cells[key]]
    return [*rows, _row(suite, "all", 0, every)] if every else rows


def _row(suite: str, split: str, bugs: int, cells: list[tuple[bool, int]]) -> CoverageRow:
    lengths = [n for _, n in cells]
    covered = sum(ok for ok, _ in cells)
    return CoverageRow(
        suite=suite,
        split=split,
        bugs=bugs,
        tasks=len(cells),
        covered=covered,
        share=covered / len(cells),
        median_length=float(statistics.median(lengths)),
        max_length=max(lengths),
    )


def suite_coverage(
    suites: Mapping[str, Iterable[Task]], try_scope: str, listed: ListFunction
) -> dict[str, Any]:
    """The result record: the scope and every suite's rows (:func:`coverage_rows`)."""
    return {
        "try_scope": try_scope,
        "suites": {
            name: [asdict(r) for r in coverage_rows(name, tasks, try_scope, listed)]
            for name, tasks in sorted(suites.items())
        },
    }
