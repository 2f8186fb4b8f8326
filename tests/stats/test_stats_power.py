"""The minimum detectable difference: the normal-approximation multiplier against the standard
normal table, the MDD of a given standard error, and the bootstrap standard error it takes."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.stats.bootstrap import seed_task_ci, task_ci
from editcredit.stats.power import (
    ALPHA,
    POWER,
    bootstrap_se,
    minimum_detectable_difference,
    z_multiplier,
)
from editcredit.stats.resampling import gather_resample_means


@pytest.mark.parametrize(
    ("alpha", "power", "multiplier"),
    [
        (0.05, 0.80, 1.959964 + 0.841621),  # z_0.975 + z_0.80 = 2.801585
        (0.05, 0.90, 1.959964 + 1.281552),
        (0.01, 0.80, 2.575829 + 0.841621),
        (0.10, 0.80, 1.644854 + 0.841621),
        (0.05, 0.50, 1.959964 + 0.0),
    ],
)
def test_the_multiplier_is_the_two_normal_quantiles(alpha, power, multiplier):
    assert z_multiplier(alpha, power) == pytest.approx(multiplier, abs=1e-6)


def test_the_defaults_are_alpha_5_percent_two_sided_and_80_percent_power():
    assert (ALPHA, POWER) == (0.05, 0.80)
    assert z_multiplier() == pytest.approx(2.801585, abs=1e-6)


@pytest.mark.parametrize(
    ("se", "alpha", "power", "mdd"),
    [
        (0.0, 0.05, 0.80, 0.0),
        (0.01, 0.05, 0.80, 0.02801585),
        (0.02, 0.05, 0.80, 0.05603170),
        (0.02, 0.05, 0.90, 0.06483032),
        (0.05, 0.01, 0.80, 0.17087250),
    ],
)
def test_mdd_of_a_standard_error(se, alpha, power, mdd):
    assert minimum_detectable_difference(se, alpha=alpha, power=power) == pytest.approx(
        mdd, abs=1e-7
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"se": -0.1}, "finite and >= 0"),
        ({"se": float("nan")}, "finite and >= 0"),
        ({"se": 0.1, "alpha": 0.0}, "alpha must lie in"),
        ({"se": 0.1, "power": 1.0}, "power must lie in"),
    ],
)
def test_mdd_refuses_what_has_no_meaning(kwargs, message):
    with pytest.raises(ValueError, match=message):
        minimum_detectable_difference(**kwargs)


@pytest.mark.parametrize(
    ("d", "scheme"),
    [
        ([[0.25, 0.25, 0.25], [0.25, 0.25, 0.25]], "seed x task"),  # no spread: SE 0
        ([[0.5]], "task (seeds fixed)"),  # one cell
        ([[0.0, 0.0], [0.0, 0.0]], "seed x task"),
    ],
)
def test_no_spread_has_no_standard_error(d, scheme):
    se = bootstrap_se(d, n_resamples=500, rng_seed=1)
    assert se.se == 0.0 and se.scheme == scheme


def test_one_seed_two_tasks_has_the_standard_error_of_a_mean_of_two():
    """Tasks 0 and 1: the resample mean is 0, 1/2 or 1 with chances 1/4, 1/2, 1/4, whose
    standard deviation is sqrt(1/8) = 0.35355."""
    se = bootstrap_se([[0.0, 1.0]], n_resamples=40_000, rng_seed=20260927)
    assert se.scheme == "task (seeds fixed)"
    assert se.se == pytest.approx(np.sqrt(1 / 8), abs=0.005)


def test_the_standard_error_comes_from_the_draws_of_the_ci():
    """Same generator seed, same resamples: the reference gather of the seed x task draws gives
    the same standard deviation, and the task-only draws for one seed."""
    g = np.random.default_rng(3)
    d = g.integers(-4, 5, size=(3, 11)) / 16.0
    n, seed = 2_000, 20260927
    rng = np.random.default_rng(seed)
    means = gather_resample_means(d, rng.integers(0, 3, (n, 3)), rng.integers(0, 11, (n, 11)))
    assert bootstrap_se(d, n_resamples=n, rng_seed=seed).se == pytest.approx(
        means.std(ddof=1), rel=1e-12
    )
    lo, hi = np.quantile(means, [0.025, 0.975])
    ci = seed_task_ci(d, n_resamples=n, rng_seed=seed, level=0.95)
    assert (ci.lower, ci.upper) == pytest.approx((lo, hi), rel=1e-12)
    one = d[:1]
    rng = np.random.default_rng(seed)
    per_task = one.mean(axis=0)[rng.integers(0, 11, (n, 11))].mean(axis=1)
    assert bootstrap_se(one, n_resamples=n, rng_seed=seed).se == pytest.approx(
        per_task.std(ddof=1), rel=1e-12
    )
    assert task_ci(one, n_resamples=n, rng_seed=seed, level=0.95).lower == pytest.approx(
        float(np.quantile(per_task, 0.025)), rel=1e-12
    )


@pytest.mark.parametrize(
    ("d", "n_resamples", "message"),
    [
        ([], 10, "non-empty finite"),
        ([[np.nan, 0.0]], 10, "non-empty finite"),
        ([[0.0, 1.0]], 0, "n_resamples must be >= 1"),
    ],
)
def test_bootstrap_se_refuses_bad_input(d, n_resamples, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_se(d, n_resamples=n_resamples, rng_seed=0)
