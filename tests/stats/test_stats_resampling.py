"""The count-matrix formulation of the bootstrap equals the index-gather formulation."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.stats import (
    counts_from_indices,
    draw_indices,
    gather_resample_means,
    means_from_counts,
    resample_means_1d,
    resample_means_seed_task,
)
from editcredit.stats import resampling as resampling_module


def _small_integer_d() -> np.ndarray:
    """Values whose sums are exact in float64, so both formulations agree bit for bit."""
    return np.array(
        [[1.0, -2.0, 0.0, 3.0, 1.0], [0.0, 1.0, -1.0, 2.0, 2.0], [4.0, 0.0, 1.0, -3.0, 0.5]]
    )


def test_counts_from_indices_hand_case():
    idx = np.array([[0, 0, 2], [1, 2, 1]])
    np.testing.assert_array_equal(counts_from_indices(idx, 3), [[2, 0, 1], [0, 2, 1]])


def test_counts_equal_gather_exactly_for_the_same_draws():
    d = _small_integer_d()
    rng = np.random.default_rng(11)
    seed_idx = draw_indices(rng, 500, d.shape[0])
    task_idx = draw_indices(rng, 500, d.shape[1])
    by_counts = means_from_counts(
        d, counts_from_indices(seed_idx, 3), counts_from_indices(task_idx, 5)
    )
    by_gather = gather_resample_means(d, seed_idx, task_idx)
    np.testing.assert_array_equal(by_counts, by_gather)


def test_counts_equal_gather_to_rounding_for_real_valued_data():
    d = np.random.default_rng(3).normal(size=(3, 40))
    rng = np.random.default_rng(12)
    seed_idx = draw_indices(rng, 300, 3)
    task_idx = draw_indices(rng, 300, 40)
    by_counts = means_from_counts(
        d, counts_from_indices(seed_idx, 3), counts_from_indices(task_idx, 40)
    )
    np.testing.assert_allclose(
        by_counts, gather_resample_means(d, seed_idx, task_idx), rtol=0, atol=1e-14
    )


@pytest.mark.parametrize("chunk_elements", [1, 7, 64, 1 << 17])
def test_fast_path_reproduces_the_gather_of_one_generator(monkeypatch, chunk_elements):
    """Chunked draws give the same indices as one (B, T) draw: results equal the plain gather."""
    monkeypatch.setattr(resampling_module, "_CHUNK_ELEMENTS", chunk_elements)
    d = _small_integer_d()
    fast = resample_means_seed_task(d, n_resamples=257, rng=np.random.default_rng(20260927))
    rng = np.random.default_rng(20260927)
    seed_idx = rng.integers(0, 3, size=(257, 3))
    task_idx = rng.integers(0, 5, size=(257, 5))
    np.testing.assert_array_equal(fast, gather_resample_means(d, seed_idx, task_idx))


@pytest.mark.parametrize("chunk_elements", [1, 9, 1 << 17])
def test_fast_1d_reproduces_the_gather(monkeypatch, chunk_elements):
    monkeypatch.setattr(resampling_module, "_CHUNK_ELEMENTS", chunk_elements)
    x = np.array([0.0, 1.0, 0.25, -0.5, 2.0, 1.0, -1.0])
    fast = resample_means_1d(x, n_resamples=101, rng=np.random.default_rng(5))
    idx = np.random.default_rng(5).integers(0, 7, size=(101, 7))
    np.testing.assert_array_equal(fast, x[idx].mean(axis=1))


def test_same_generator_seed_same_means_to_the_last_digit():
    d = np.random.default_rng(0).normal(size=(3, 200))
    a = resample_means_seed_task(d, n_resamples=2000, rng=np.random.default_rng(20260927))
    b = resample_means_seed_task(d, n_resamples=2000, rng=np.random.default_rng(20260927))
    c = resample_means_seed_task(d, n_resamples=2000, rng=np.random.default_rng(20260928))
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)


def test_one_seed_one_task_degenerate():
    d = np.array([[0.25]])
    out = resample_means_seed_task(d, n_resamples=10, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(out, np.full(10, 0.25))


def test_fast_path_matches_gather_and_counts_for_real_valued_data():
    d = np.random.default_rng(4).normal(size=(4, 333))
    fast = resample_means_seed_task(d, n_resamples=400, rng=np.random.default_rng(99))
    rng = np.random.default_rng(99)
    seed_idx, task_idx = draw_indices(rng, 400, 4), draw_indices(rng, 400, 333)
    gather = gather_resample_means(d, seed_idx, task_idx)
    counts = means_from_counts(
        d, counts_from_indices(seed_idx, 4), counts_from_indices(task_idx, 333)
    )
    np.testing.assert_allclose(fast, gather, rtol=0, atol=1e-14)
    np.testing.assert_allclose(fast, counts, rtol=0, atol=1e-14)
