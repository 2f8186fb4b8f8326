"""Score of one model on one eval set, with bounds while slots are unresolved (METHOD §8).

The score is the mean over the ``n`` samples of each task, then the equal-weight mean over the
tasks (not pass@k, not best-of-n). Every planned slot (task x sample) stays in the denominator:
with ``N`` planned slots, ``K`` known and ``S`` successes the score lies in
``[S/N, (S + N - K)/N]``, and there is no point estimate while ``K < N``.

Because every task of an eval set has the same ``n``, the equal-weight mean of the task means is
exactly ``S/N``; the point estimate is computed as that single rational ``S/N`` so that it is
identical, to the last digit, to both bounds once everything is resolved.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.stats._records import record_to_dict

__all__ = ["EvalSetScore", "score_slots", "score_table"]


@dataclass(frozen=True)
class EvalSetScore:
    """Score of one model on one eval set.

    Attributes:
        tasks: planned task ids, in plan order.
        n_samples: planned samples per task (``n``).
        n_planned: planned slots ``N = len(tasks) * n_samples``.
        n_known: slots with a verdict (0 or 1), ``K``.
        n_successes: slots with verdict 1, ``S``.
        n_unresolved: ``N - K``; slots with a null verdict or with no row at all.
        n_missing_rows: the part of ``n_unresolved`` that has no row in the input.
        lower: ``S/N``, the score if every unresolved slot were 0.
        upper: ``(S + N - K)/N``, the score if every unresolved slot were 1.
        score: the point estimate, or ``None`` while ``K < N``.
        task_lower: per task, successes / n.
        task_upper: per task, (successes + unresolved) / n.
    """

    tasks: tuple[str, ...]
    n_samples: int
    n_planned: int
    n_known: int
    n_successes: int
    n_unresolved: int
    n_missing_rows: int
    lower: float
    upper: float
    score: float | None
    task_lower: tuple[float, ...]
    task_upper: tuple[float, ...]

    @property
    def resolved(self) -> bool:
        """True when every planned slot has a verdict (``K == N``)."""
        return self.n_known == self.n_planned

    @property
    def task_scores(self) -> tuple[float | None, ...]:
        """Per-task mean over the n samples; ``None`` for a task with an unresolved slot."""
        return tuple(
            lo if lo == hi else None
            for lo, hi in zip(self.task_lower, self.task_upper, strict=True)
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields, plus ``resolved``."""
        out = record_to_dict(self)
        out["resolved"] = self.resolved
        return out


def _verdict(value: Any, where: str) -> int | None:
    """Map one slot value to 1, 0, or None (unresolved); reject anything else."""
    if value is None or type(value).__name__ == "NAType":  # None, pandas.NA
        return None
    try:
        if isinstance(value, str | bytes):
            raise TypeError("text is not a verdict")
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: value {value!r} is not 0, 1 or null") from exc
    if math.isnan(x):
        return None
    if x == 1.0:
        return 1
    if x == 0.0:
        return 0
    raise ValueError(f"{where}: value {value!r} is not 0, 1 or null")


def _sample_index(sample: Any, n_samples: int, where: str) -> int:
    """Validate one sample index: an integer (not a bool) in ``[0, n_samples)``."""
    try:
        index = int(sample)
        exact = not isinstance(sample, bool) and index == sample
    except (TypeError, ValueError):
        exact = False
    if not exact or not 0 <= index < n_samples:
        raise ValueError(f"{where}: sample index is not an integer in [0, {n_samples})")
    return index


def score_slots(
    tasks: Sequence[Hashable],
    samples: Sequence[int],
    values: Sequence[Any],
    *,
    n_samples: int,
    planned_tasks: Sequence[Hashable] | None = None,
) -> EvalSetScore:
    """Score one model on one eval set from parallel columns, one row per slot.

    Args:
        tasks: task id of each row.
        samples: sample index of each row, in ``[0, n_samples)``.
        values: verdict of each row: 1, 0, or null (``None``, NaN, ``pandas.NA``) for an
            unresolved slot. Booleans are accepted.
        n_samples: planned samples per task (``n``), from config.
        planned_tasks: the planned task ids (the denominator). Defaults to the distinct tasks of
            the rows, in order of first appearance. A planned slot with no row is unresolved.

    Raises:
        ValueError: on columns of different lengths, a value other than 0/1/null, a sample index
            outside ``[0, n_samples)``, a task not in the plan, or two rows for one slot. The
            message names the row.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    if not len(tasks) == len(samples) == len(values):
        raise ValueError(
            f"columns differ in length: tasks={len(tasks)}, samples={len(samples)}, "
            f"values={len(values)}"
        )
    plan = list(dict.fromkeys(tasks)) if planned_tasks is None else list(planned_tasks)
    if len(set(plan)) != len(plan):
        raise ValueError("planned_tasks contains a duplicate task id")
    if not plan:
        raise ValueError("no planned tasks: the eval set is empty")
    position = {task: i for i, task in enumerate(plan)}
    successes = [0] * len(plan)
    known = [0] * len(plan)
    present = [0] * len(plan)
    seen: dict[tuple[int, int], int] = {}
    for row, (task, sample, value) in enumerate(zip(tasks, samples, values, strict=True)):
        where = f"row {row} (task={task!r}, sample={sample!r})"
        if task not in position:
            raise ValueError(f"{where}: task is not in planned_tasks")
        i = position[task]
        index = _sample_index(sample, n_samples, where)
        key = (i, index)
        if key in seen:
            raise ValueError(f"{where}: duplicate slot, already given in row {seen[key]}")
        seen[key] = row
        present[i] += 1
        verdict = _verdict(value, where)
        if verdict is not None:
            known[i] += 1
            successes[i] += verdict
    n_planned = len(plan) * n_samples
    n_known = sum(known)
    n_successes = sum(successes)
    n_unresolved = n_planned - n_known
    lower = n_successes / n_planned
    upper = (n_successes + n_unresolved) / n_planned
    return EvalSetScore(
        tasks=tuple(str(t) for t in plan),
        n_samples=n_samples,
        n_planned=n_planned,
        n_known=n_known,
        n_successes=n_successes,
        n_unresolved=n_unresolved,
        n_missing_rows=n_planned - sum(present),
        lower=lower,
        upper=upper,
        score=lower if n_unresolved == 0 else None,
        task_lower=tuple(s / n_samples for s in successes),
        task_upper=tuple(
            (s + n_samples - k) / n_samples for s, k in zip(successes, known, strict=True)
        ),
    )


def score_table(
    table: Mapping[str, Any],
    *,
    n_samples: int,
    planned_tasks: Sequence[Hashable] | None = None,
    task_column: str = "task",
    sample_column: str = "sample",
    value_column: str = "value",
) -> EvalSetScore:
    """Score one model on one eval set from a tidy table (one row per slot).

    ``table`` is anything indexable by column name that yields sequences: a dict of lists, a
    ``pandas.DataFrame``, a pyarrow table converted with ``to_pydict()``. See
    :func:`score_slots` for the meaning of the columns and the errors.
    """
    columns = {}
    for name in (task_column, sample_column, value_column):
        try:
            columns[name] = list(table[name])
        except KeyError as exc:
            raise ValueError(f"table has no column {name!r}") from exc
    return score_slots(
        columns[task_column],
        columns[sample_column],
        columns[value_column],
        n_samples=n_samples,
        planned_tasks=planned_tasks,
    )
