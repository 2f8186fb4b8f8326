"""Bootstrap resample means without materialising the resamples (the fast core of the bootstrap).

Resampling ``n`` units with replacement is the same as drawing a count vector ``c`` (how often
each unit was drawn, summing to ``n``). The mean of a resample of a vector ``x`` is ``c @ x / n``,
and the mean of ``D[seed, task]`` over independently resampled seeds and tasks is
``(w @ D @ v) / (S * T)`` for seed counts ``w`` and task counts ``v``
(:func:`counts_from_indices`, :func:`means_from_counts`).

The fast path evaluates the same bilinear form in the cheapest order: per chunk of resamples it
forms the seed-weighted rows ``e_b = w_b @ D`` with one small matrix product, and applies the task
counts as ``e_b @ v_b = sum_k e_b[task_idx[b, k]]``, one gather-and-sum over the drawn task indices
(cheaper than counting them into ``v_b``, casting and multiplying). The resample values
``B x S x T`` of the plain gather are never formed.

Draws. The index draws are exactly those of the plain gather: one ``numpy.random.Generator``;
first the seed indices, ``rng.integers(0, S, (B, S))``; then the task indices,
``rng.integers(0, T, (B, T))`` (default int64). The task indices are drawn in row chunks to stay in
cache; numpy's bounded int64 draws with a range below 2**32 take one 32-bit word per value from the
generator's state, so chunked draws yield the same indices as one ``(B, T)`` call (a test pins
this). Hence the resample means equal those of :func:`gather_resample_means` for the same
generator seed: exactly when the data are small integers or dyadic fractions (e.g. task scores in
multiples of 1/16), and to rounding otherwise (the sums run in a different order). Same seed, same
numpy, same inputs: the same result to the last digit.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "counts_from_indices",
    "draw_indices",
    "gather_resample_means",
    "means_from_counts",
    "resample_means_1d",
    "resample_means_seed_task",
]

#: Task indices drawn per chunk (512 KiB of int64, plus as much for the seed-weighted rows and
#: the gathered values), so that draw, gather and sum work in L2. Does not change the result.
_CHUNK_ELEMENTS = 1 << 16


def draw_indices(rng: np.random.Generator, n_resamples: int, n_units: int) -> np.ndarray:
    """Resampling indices: ``n_resamples`` rows of ``n_units`` draws from ``[0, n_units)``."""
    return rng.integers(0, n_units, size=(n_resamples, n_units))


def counts_from_indices(indices: np.ndarray, n_units: int) -> np.ndarray:
    """Count matrix of resampling indices: ``out[b, j]`` = times unit ``j`` is in row ``b``.

    One ``np.bincount`` over the indices offset by ``b * n_units``; returned as float64 (exact:
    counts are small integers) so that it feeds a matrix product directly. Used for the seed
    counts ``w`` of the fast path, and with :func:`means_from_counts` as the count formulation.
    """
    indices = np.asarray(indices)
    n_rows = indices.shape[0]
    offset = indices + (np.arange(n_rows, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount(offset.ravel(), minlength=n_rows * n_units)
    return counts.reshape(n_rows, n_units).astype(np.float64)


def means_from_counts(
    d: np.ndarray, seed_counts: np.ndarray, task_counts: np.ndarray
) -> np.ndarray:
    """Resample means ``(w_b @ D @ v_b) / (S * T)`` for every row ``b`` of the count matrices."""
    n_seeds, n_tasks = d.shape
    per_seed = task_counts @ np.ascontiguousarray(d.T)  # (B, S): sum_t v_bt * D[s, t]
    return np.einsum("bs,bs->b", seed_counts, per_seed) / (n_seeds * n_tasks)


def gather_resample_means(
    d: np.ndarray, seed_indices: np.ndarray, task_indices: np.ndarray
) -> np.ndarray:
    """Reference formulation: gather ``D[seed_idx, task_idx]`` per resample and average it.

    Memory ``B x S x T``; kept as the definition the fast path is tested against.
    """
    d = np.asarray(d, dtype=np.float64)
    return d[seed_indices[:, :, None], task_indices[:, None, :]].mean(axis=(1, 2))


def _chunk_rows(n_units: int) -> int:
    return max(1, _CHUNK_ELEMENTS // n_units)


def resample_means_seed_task(
    d: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means of ``D[seed, task]`` over ``n_resamples`` two-dimensional (seed x task) resamples.

    Seeds and tasks are resampled independently with replacement (pigeonhole bootstrap).
    ``d`` must be a finite float array of shape ``(S, T)``; validation is the caller's job.
    """
    d = np.ascontiguousarray(d, dtype=np.float64)
    n_seeds, n_tasks = d.shape
    seed_counts = counts_from_indices(draw_indices(rng, n_resamples, n_seeds), n_seeds)
    rows = _chunk_rows(n_tasks)
    offsets = np.arange(rows, dtype=np.int64)[:, None] * n_tasks
    out = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        weighted = seed_counts[start : start + m] @ d  # (m, T): row b is w_b @ D
        idx = rng.integers(0, n_tasks, size=(m, n_tasks))
        idx += offsets[:m]  # index into the flattened (m, T) block
        out[start : start + m] = np.take(weighted, idx).sum(axis=1)
    out /= n_seeds * n_tasks
    return out


def resample_means_1d(x: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``x`` over ``n_resamples`` resamples of its entries with replacement.

    The draws are ``rng.integers(0, n, (B, n))``, as for the gather ``x[idx].mean(axis=1)``.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    n_units = x.shape[0]
    rows = _chunk_rows(n_units)
    out = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n_units, size=(m, n_units))
        out[start : start + m] = np.take(x, idx).sum(axis=1)
    out /= n_units
    return out
