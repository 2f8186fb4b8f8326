"""Percentile bootstrap CIs: agreement with scipy, determinism, power, and false-positive rate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from editcredit.stats import BootstrapCI, mean_ci, seed_task_ci, task_ci

RNG_SEED = 20260927  # METHOD's default; in production it comes from config
LEVEL = 0.95  # likewise (config stats.bootstrap.level)


def _scipy_percentile_ci(x: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    res = scipy_stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=n_resamples,
        method="percentile",
        confidence_level=LEVEL,
        rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


DATASETS = {
    "normal": np.random.default_rng(1).normal(0.1, 1.0, size=80),
    "task differences in 1/16": np.random.default_rng(2).integers(-4, 5, size=120) / 16,
    "skewed": np.random.default_rng(3).exponential(1.0, size=50),
}


@pytest.mark.parametrize("name", list(DATASETS))
def test_1d_ci_agrees_with_scipy_within_monte_carlo_error(name):
    x = DATASETS[name]
    n_resamples = 20_000
    ours = mean_ci(x, n_resamples=n_resamples, rng_seed=RNG_SEED, level=LEVEL)
    theirs = _scipy_percentile_ci(x, n_resamples, seed=RNG_SEED + 1)  # independent draws
    se = x.std(ddof=1) / np.sqrt(x.size)
    # MC sd of a 2.5 % quantile endpoint at B=20k is ~0.02 se; the difference of two ~0.03 se
    assert abs(ours.lower - theirs[0]) < 0.15 * se
    assert abs(ours.upper - theirs[1]) < 0.15 * se
    assert ours.estimate == pytest.approx(x.mean())


@pytest.mark.parametrize("name", list(DATASETS))
def test_1d_ci_equals_scipy_for_the_same_generator_seed(name):
    """scipy draws rng.integers(0, n, (B, n)) in one batch, like us: same resamples."""
    x = DATASETS[name]
    ours = mean_ci(x, n_resamples=5000, rng_seed=RNG_SEED, level=LEVEL)
    theirs = _scipy_percentile_ci(x, 5000, seed=RNG_SEED)
    assert (ours.lower, ours.upper) == pytest.approx(theirs, rel=0, abs=1e-12)


def test_same_seed_identical_ci_to_the_last_digit():
    d = np.random.default_rng(7).normal(0.02, 0.2, size=(3, 100))
    for fn in (seed_task_ci, task_ci):
        a = fn(d, n_resamples=3000, rng_seed=RNG_SEED, level=LEVEL)
        b = fn(d, n_resamples=3000, rng_seed=RNG_SEED, level=LEVEL)
        assert a == b
        assert (a.lower.hex(), a.upper.hex()) == (b.lower.hex(), b.upper.hex())
        assert fn(d, n_resamples=3000, rng_seed=RNG_SEED + 1, level=LEVEL) != a


def test_task_ci_is_1d_bootstrap_of_seed_means():
    d = np.random.default_rng(8).normal(size=(3, 60))
    a = task_ci(d, n_resamples=2000, rng_seed=5, level=LEVEL)
    b = mean_ci(d.mean(axis=0), n_resamples=2000, rng_seed=5, level=LEVEL)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    assert a.scheme == "task (seeds fixed)" and a.n_seeds == 3 and a.n_units == 60


def test_one_seed_seed_task_ci_equals_task_ci():
    d = np.random.default_rng(9).normal(size=(1, 60))
    a = seed_task_ci(d, n_resamples=2000, rng_seed=5, level=LEVEL)
    b = task_ci(d, n_resamples=2000, rng_seed=5, level=LEVEL)
    assert (a.lower, a.upper) == pytest.approx((b.lower, b.upper), abs=1e-15)


def test_planted_effect_is_found():
    g = np.random.default_rng(10)
    n_seeds, n_tasks = 3, 100
    effect, task_sd = 0.10, 0.20  # effect = 5 standard errors of the task mean
    d = effect + g.normal(0, task_sd, size=(1, n_tasks)) + g.normal(0, 0.1, size=(n_seeds, n_tasks))
    assert abs(d.mean() - effect) < 3 * task_sd / np.sqrt(n_tasks)
    for fn in (seed_task_ci, task_ci):
        ci = fn(d, n_resamples=10_000, rng_seed=RNG_SEED, level=LEVEL)
        assert ci.lower > 0
        assert ci.excludes_zero
        assert ci.lower < ci.estimate < ci.upper


def test_null_false_positive_rate_near_nominal():
    """200 null datasets (task effect + seed-by-task noise, true mean 0): CI excludes 0 ~5 %."""
    g = np.random.default_rng(2026)
    n_data, n_seeds, n_tasks = 200, 3, 100
    hits = {"seed x task": 0, "task (seeds fixed)": 0}
    for i in range(n_data):
        d = g.normal(0, 1.0, size=(1, n_tasks)) + g.normal(0, 0.5, size=(n_seeds, n_tasks))
        for fn in (seed_task_ci, task_ci):
            ci = fn(d, n_resamples=2000, rng_seed=RNG_SEED + i, level=LEVEL)
            hits[ci.scheme] += ci.excludes_zero
    for scheme, n_hits in hits.items():
        assert 0.01 <= n_hits / n_data <= 0.12, (scheme, n_hits)


def test_ci_level_and_nesting():
    d = np.random.default_rng(11).normal(size=(3, 50))
    wide = seed_task_ci(d, n_resamples=4000, rng_seed=1, level=0.99)
    narrow = seed_task_ci(d, n_resamples=4000, rng_seed=1, level=0.80)
    assert wide.lower < narrow.lower < narrow.upper < wide.upper


def test_record_to_dict_is_json_ready():
    ci = seed_task_ci([[0.0, 1.0], [1.0, 0.5]], n_resamples=100, rng_seed=1, level=LEVEL)
    assert isinstance(ci, BootstrapCI)
    out = ci.to_dict()
    json.dumps(out)
    assert out["scheme"] == "seed x task" and out["method"] == "percentile"
    assert out["n_resamples"] == 100 and out["rng_seed"] == 1


@pytest.mark.parametrize(
    ("d", "kwargs", "match"),
    [
        ([[0.0, np.nan]], {}, r"D\[seed=0, task=1\]"),
        ([0.0, 1.0], {}, r"seeds x tasks"),
        (np.zeros((0, 3)), {}, r"seeds x tasks"),
        ([[0.0]], {"n_resamples": 0}, r"n_resamples"),
        ([[0.0]], {"n_resamples": 2.5}, r"n_resamples"),
        ([[0.0]], {"rng_seed": -1}, r"rng_seed"),
        ([[0.0]], {"level": 1.0}, r"level"),
    ],
)
def test_invalid_inputs(d, kwargs, match):
    args = {"n_resamples": 10, "rng_seed": 1, "level": LEVEL} | kwargs
    with pytest.raises(ValueError, match=match):
        seed_task_ci(d, **args)


def test_mean_ci_rejects_non_finite():
    with pytest.raises(ValueError, match=r"x\[1\]"):
        mean_ci([0.0, np.inf], n_resamples=10, rng_seed=1, level=LEVEL)
