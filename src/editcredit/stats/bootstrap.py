"""Percentile bootstrap confidence intervals for paired differences (METHOD §9).

- :func:`seed_task_ci`: the two-dimensional (seed x task) pigeonhole bootstrap of the mean of
  ``D[seed, task]``: seeds and tasks resampled independently with replacement.
- :func:`task_ci`: the task-only bootstrap with the seeds held fixed (reported beside it: with
  three seeds the seed dimension is thin).
- :func:`mean_ci`: the one-dimensional bootstrap of a mean over units (tasks), used by the
  training-side encounter analysis.
- :func:`stratified_ci`: the bootstrap of an equal-weight mean of stratum means, each stratum's
  units resampled on their own (the trained / untrained parts of a comparison: tasks within each
  seed, the seeds fixed).

Every interval states its half-width (:func:`half_width`): half the distance between its ends.
A percentile interval need not be symmetric about the estimate; the half-width is its size, not
a symmetric bound.

The number of resamples and the RNG seed come from the caller (config: 10,000 and 20260927).
Each call seeds its own ``numpy.random.default_rng(rng_seed)``, so the same inputs and seed give
the same interval to the last digit. The interval is the percentile interval of the resample
means, with numpy's default (linear) quantile interpolation, as in
``scipy.stats.bootstrap(..., method="percentile")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from editcredit.stats._records import record_to_dict
from editcredit.stats.records import CIRecord
from editcredit.stats.resampling import resample_means_1d, resample_means_seed_task

__all__ = [
    "BootstrapCI",
    "half_width",
    "mean_ci",
    "percentile_interval",
    "seed_task_ci",
    "stratified_ci",
    "task_ci",
]

Scheme = Literal["seed x task", "task (seeds fixed)", "units", "task within seed (seeds fixed)"]


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap confidence interval for a mean.

    Attributes:
        estimate: the mean of the data (not of the resamples).
        lower: lower end of the interval.
        upper: upper end of the interval.
        level: confidence level, e.g. 0.95.
        scheme: what was resampled: ``"seed x task"``, ``"task (seeds fixed)"``, ``"units"`` or
            ``"task within seed (seeds fixed)"`` (:func:`stratified_ci`).
        n_seeds: seeds in the data (1 for a one-dimensional bootstrap).
        n_units: tasks (or other units) in the data.
        n_resamples: bootstrap resamples drawn.
        rng_seed: seed of ``numpy.random.default_rng``.
        method: always ``"percentile"``.
    """

    estimate: float
    lower: float
    upper: float
    level: float
    scheme: Scheme
    n_seeds: int
    n_units: int
    n_resamples: int
    rng_seed: int
    method: str = "percentile"

    @property
    def half_width(self) -> float:
        """Half the interval's width, ``(upper - lower) / 2`` (:func:`half_width`)."""
        return half_width(self.lower, self.upper)

    @property
    def excludes_zero(self) -> bool:
        """True when zero lies outside the closed interval."""
        return self.lower > 0.0 or self.upper < 0.0

    def to_dict(self) -> CIRecord:
        """JSON-ready dict of the fields, plus ``half_width``."""
        out = record_to_dict(self)
        out["half_width"] = self.half_width
        return cast(CIRecord, out)


def half_width(lower: float, upper: float) -> float:
    """Half the width of the interval ``[lower, upper]``: ``(upper - lower) / 2``.

    Raises:
        ValueError: when an end is not finite or ``lower > upper``.
    """
    lo, hi = float(lower), float(upper)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"interval [{lower}, {upper}] has an end that is not finite")
    if lo > hi:
        raise ValueError(f"interval [{lower}, {upper}] has lower > upper")
    return (hi - lo) / 2.0


def percentile_interval(resample_means: np.ndarray, level: float) -> tuple[float, float]:
    """Equal-tailed percentile interval: the ``(1-level)/2`` and ``(1+level)/2`` quantiles."""
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(resample_means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _check_common(n_resamples: int, rng_seed: int, level: float) -> None:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if isinstance(rng_seed, bool) or int(rng_seed) != rng_seed or rng_seed < 0:
        raise ValueError(f"rng_seed must be a non-negative integer, got {rng_seed!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")


def _as_matrix(d: ArrayLike) -> np.ndarray:
    """``d`` as a finite float64 (seeds x tasks) matrix; errors name the first bad cell."""
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"expected a non-empty (seeds x tasks) matrix, got shape {arr.shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        s, t = bad[0]
        raise ValueError(f"D[seed={s}, task={t}] = {arr[s, t]} is not finite")
    return arr


def _as_vector(x: ArrayLike) -> np.ndarray:
    """``x`` as a finite, non-empty float64 vector; errors name the first bad entry."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"expected a non-empty vector, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"x[{bad[0]}] = {arr[bad[0]]} is not finite")
    return arr


def seed_task_ci(d: ArrayLike, *, n_resamples: int, rng_seed: int, level: float) -> BootstrapCI:
    """Two-dimensional (seed x task) pigeonhole bootstrap CI of the mean of ``D[seed, task]``.

    Each resample draws ``S`` seeds and ``T`` tasks independently with replacement and takes the
    mean of ``D`` over the crossed selection. With one seed this equals :func:`task_ci`.

    Args:
        d: paired differences, shape ``(S, T)``, finite.
        n_resamples: bootstrap resamples ``B``.
        rng_seed: seed of ``numpy.random.default_rng``.
        level: confidence level of the percentile interval.
    """
    _check_common(n_resamples, rng_seed, level)
    arr = _as_matrix(d)
    rng = np.random.default_rng(rng_seed)
    means = resample_means_seed_task(arr, n_resamples=int(n_resamples), rng=rng)
    return _ci(means, arr, level, "seed x task", arr.shape[0], arr.shape[1], n_resamples, rng_seed)


def _ci(means, arr, level, scheme, n_seeds, n_units, n_resamples, rng_seed) -> BootstrapCI:
    """The percentile interval of the resampled means, as a BootstrapCI record."""
    lo, hi = percentile_interval(means, level)
    return BootstrapCI(
        estimate=float(arr.mean()),
        lower=lo,
        upper=hi,
        level=level,
        scheme=scheme,
        n_seeds=n_seeds,
        n_units=n_units,
        n_resamples=int(n_resamples),
        rng_seed=int(rng_seed),
    )


def task_ci(d: ArrayLike, *, n_resamples: int, rng_seed: int, level: float) -> BootstrapCI:
    """Task-only bootstrap CI of the mean of ``D[seed, task]``, the seeds held fixed.

    Resamples tasks only; each resample's statistic is the mean over all seeds of the resampled
    tasks, i.e. the one-dimensional bootstrap of the per-task seed means.
    """
    _check_common(n_resamples, rng_seed, level)
    arr = _as_matrix(d)
    per_task = arr.mean(axis=0)
    rng = np.random.default_rng(rng_seed)
    means = resample_means_1d(per_task, n_resamples=int(n_resamples), rng=rng)
    return _ci(
        means, arr, level, "task (seeds fixed)", arr.shape[0], arr.shape[1], n_resamples, rng_seed
    )


def mean_ci(x: ArrayLike, *, n_resamples: int, rng_seed: int, level: float) -> BootstrapCI:
    """One-dimensional percentile bootstrap CI of the mean of ``x`` (one value per unit)."""
    _check_common(n_resamples, rng_seed, level)
    arr = _as_vector(x)
    rng = np.random.default_rng(rng_seed)
    means = resample_means_1d(arr, n_resamples=int(n_resamples), rng=rng)
    return _ci(means, arr, level, "units", 1, arr.shape[0], n_resamples, rng_seed)


def stratified_ci(
    strata: Sequence[ArrayLike], *, n_resamples: int, rng_seed: int, level: float
) -> BootstrapCI:
    """Percentile bootstrap CI of the equal-weight mean of the strata's means.

    Each resample draws, for each stratum in order, its units with replacement (one generator,
    the strata drawn one after another) and averages the strata's resample means equally. Used
    for a part of a paired comparison whose tasks differ by seed (tasks a seed's runs trained
    on): the strata are the seeds, the units that seed's per-task differences, the seeds fixed.
    With one stratum this is :func:`mean_ci` of it (the same draws, the same interval).

    Args:
        strata: one non-empty vector of finite values per stratum.
        n_resamples, rng_seed, level: as :func:`seed_task_ci`.

    Raises:
        ValueError: when there is no stratum, or one is empty or holds a non-finite value
            (naming the stratum).
    """
    _check_common(n_resamples, rng_seed, level)
    if not strata:
        raise ValueError("stratified_ci: no strata given")
    arrays = []
    for i, x in enumerate(strata):
        try:
            arrays.append(_as_vector(x))
        except ValueError as exc:
            raise ValueError(f"stratum {i}: {exc}") from exc
    rng = np.random.default_rng(rng_seed)
    means = np.zeros(int(n_resamples))
    for arr in arrays:
        means += resample_means_1d(arr, n_resamples=int(n_resamples), rng=rng)
    means /= len(arrays)
    estimate = float(np.mean([arr.mean() for arr in arrays]))
    lo, hi = percentile_interval(means, level)
    return BootstrapCI(
        estimate=estimate,
        lower=lo,
        upper=hi,
        level=level,
        scheme="task within seed (seeds fixed)",
        n_seeds=len(arrays),
        n_units=sum(arr.shape[0] for arr in arrays),
        n_resamples=int(n_resamples),
        rng_seed=int(rng_seed),
    )
