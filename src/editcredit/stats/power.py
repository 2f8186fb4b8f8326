"""The minimum detectable difference of a paired comparison (METHOD §9, "Power").

The minimum detectable difference (MDD) at two-sided level ``alpha`` and power ``power`` is the
true difference a two-sided z-test of the measured standard error would detect with probability
``power`` (normal approximation)::

    MDD = (z_{1 - alpha/2} + z_{power}) * SE

with ``z_q`` the standard normal quantile. At alpha 0.05 and 80 % power the multiplier is
1.95996 + 0.84162 = 2.80159.

SE is the standard error of the paired difference as the seed x task bootstrap measures it: the
sample standard deviation (ddof 1) of the bootstrap resample means, the very draws of
:func:`~editcredit.stats.bootstrap.seed_task_ci` (the same generator seed, the same resamples);
for one paired seed, those of the task-only bootstrap
(:func:`~editcredit.stats.bootstrap.task_ci`). It is the ``sd`` of a paired record's
``bootstrap_distribution``.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from editcredit.stats.resampling import resample_means_1d, resample_means_seed_task

__all__ = [
    "ALPHA",
    "POWER",
    "BootstrapSE",
    "bootstrap_se",
    "minimum_detectable_difference",
    "z_multiplier",
]

#: two-sided level of the test the MDD is stated for
ALPHA = 0.05
#: the power the MDD is stated at
POWER = 0.80


def _check_probability(name: str, value: float) -> None:
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")


def z_multiplier(alpha: float = ALPHA, power: float = POWER) -> float:
    """``z_{1 - alpha/2} + z_{power}``: the MDD in standard errors (2.80159 at 0.05 and 0.80)."""
    _check_probability("alpha", alpha)
    _check_probability("power", power)
    z = NormalDist()
    return z.inv_cdf(1.0 - alpha / 2.0) + z.inv_cdf(power)


def minimum_detectable_difference(
    se: float, *, alpha: float = ALPHA, power: float = POWER
) -> float:
    """``(z_{1 - alpha/2} + z_{power}) * se``: the MDD of a difference with standard error ``se``.

    Raises:
        ValueError: when ``se`` is negative or not finite, or alpha or power lie outside (0, 1).
    """
    se = float(se)
    if not np.isfinite(se) or se < 0.0:
        raise ValueError(f"the standard error must be finite and >= 0, got {se!r}")
    return z_multiplier(alpha, power) * se


@dataclass(frozen=True)
class BootstrapSE:
    """The bootstrap standard error of the mean paired difference.

    Attributes:
        se: the sample standard deviation (ddof 1) of the resample means (0 for one resample).
        scheme: ``"seed x task"``, or ``"task (seeds fixed)"`` for one paired seed.
        n_resamples, rng_seed: the bootstrap's.
    """

    se: float
    scheme: str
    n_resamples: int
    rng_seed: int


def bootstrap_se(d: ArrayLike, *, n_resamples: int, rng_seed: int) -> BootstrapSE:
    """The standard error of the mean of ``D[seed, task]`` by the bootstrap of its CI.

    Several seeds: the seed x task resample means of :func:`seed_task_ci` (same draws); one
    seed: the task-only ones of :func:`task_ci`.

    Raises:
        ValueError: when ``d`` is not a non-empty finite (seeds x tasks) matrix or
            ``n_resamples`` is below 1.
    """
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 2 or arr.size == 0 or not np.isfinite(arr).all():
        raise ValueError(f"expected a non-empty finite (seeds x tasks) matrix, got {arr.shape}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    rng = np.random.default_rng(int(rng_seed))
    if arr.shape[0] == 1:
        means = resample_means_1d(arr.mean(axis=0), n_resamples=int(n_resamples), rng=rng)
        scheme = "task (seeds fixed)"
    else:
        means = resample_means_seed_task(arr, n_resamples=int(n_resamples), rng=rng)
        scheme = "seed x task"
    se = float(means.std(ddof=1)) if means.size > 1 else 0.0
    return BootstrapSE(se, scheme, int(n_resamples), int(rng_seed))
