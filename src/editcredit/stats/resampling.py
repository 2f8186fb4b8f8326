"""Bootstrap resample means as count-weighted matrix products (the fast core of the bootstrap).

Resampling ``n`` units with replacement is the same as drawing a count vector ``c`` (how often
each unit was drawn, summing to ``n``). The mean of a resample of a vector ``x`` is then
``c @ x / n``, and the mean of ``D[seed, task]`` over independently resampled seeds and tasks is
``(w @ D @ v) / (S * T)`` for seed counts ``w`` and task counts ``v``. So a whole bootstrap is a
pair of matrix products over count matrices instead of a gather of ``B x S x T`` values.

Draws. The index draws are exactly those of the straightforward gather: one
``numpy.random.Generator`` seeded once; first the seed indices, ``rng.integers(0, S, (B, S))``;
then the task indices, ``rng.integers(0, T, (B, T))`` (default int64). The task indices are
drawn in row chunks to stay in cache; numpy's bounded int64 draws with a range below 2**32 take
one 32-bit word per value from the generator's state, so drawing in chunks yields the same
indices as one ``(B, T)`` call (a test pins this). Hence the resample means equal, for the same
``Generator`` seed, those of :func:`gather_resample_means` on the same index arrays: exactly when
the data are small integers or dyadic fractions, and to rounding otherwise (the sums run in a
different order). Same seed, same numpy, same inputs: the same result to the last digit.
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

#: Indices drawn per chunk (~1 MiB of int64), so draws, counts and products stay in cache.
_CHUNK_ELEMENTS = 1 << 17


def draw_indices(rng: np.random.Generator, n_resamples: int, n_units: int) -> np.ndarray:
    """Resampling indices: ``n_resamples`` rows of ``n_units`` draws from ``[0, n_units)``."""
    return rng.integers(0, n_units, size=(n_resamples, n_units))


def counts_from_indices(indices: np.ndarray, n_units: int) -> np.ndarray:
    """Count matrix of resampling indices: ``out[b, j]`` = times unit ``j`` is in row ``b``.

    One ``np.bincount`` over the indices offset by ``b * n_units``; returned as float64 (exact:
    counts are small integers) so that it feeds a BLAS matrix product directly.
    """
    indices = np.asarray(indices)
    n_rows = indices.shape[0]
    offset = indices + (np.arange(n_rows, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount(offset.ravel(), minlength=n_rows * n_units)
    return counts.reshape(n_rows, n_units).astype(np.float64)


def means_from_counts(d: np.ndarray, seed_counts: np.ndarray, task_counts: np.ndarray) -> np.ndarray:
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


def _chunked_counts_products(
    rng: np.random.Generator, n_resamples: int, values: np.ndarray
) -> np.ndarray:
    """For each resample b of the ``n`` columns of ``values`` (k x n): ``values @ v_b``.

    Draws the column indices row-chunk by row-chunk (same stream as one ``(B, n)`` draw),
    counts them with one bincount per chunk and multiplies. Returns shape ``(B, k)``.
    """
    n_units = values.shape[1]
    rows = max(1, _CHUNK_ELEMENTS // n_units)
    offsets = np.arange(rows, dtype=np.int64)[:, None] * n_units
    values_t = np.ascontiguousarray(values.T, dtype=np.float64)  # (n, k)
    out = np.empty((n_resamples, values.shape[0]), dtype=np.float64)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n_units, size=(m, n_units))
        idx += offsets[:m]
        counts = np.bincount(idx.ravel(), minlength=m * n_units).reshape(m, n_units)
        np.matmul(counts.astype(np.float64), values_t, out=out[start : start + m])
    return out


def resample_means_seed_task(
    d: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means of ``D[seed, task]`` over ``n_resamples`` two-dimensional (seed x task) resamples.

    Seeds and tasks are resampled independently with replacement (pigeonhole bootstrap).
    ``d`` must be a finite float array of shape ``(S, T)``; validation is the caller's job.
    """
    n_seeds, n_tasks = d.shape
    seed_counts = counts_from_indices(draw_indices(rng, n_resamples, n_seeds), n_seeds)
    per_seed = _chunked_counts_products(rng, n_resamples, d)  # (B, S)
    return np.einsum("bs,bs->b", seed_counts, per_seed) / (n_seeds * n_tasks)


def resample_means_1d(x: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``x`` over ``n_resamples`` resamples of its entries with replacement.

    The draws are ``rng.integers(0, n, (B, n))``, as for the gather ``x[idx].mean(axis=1)``.
    """
    n_units = x.shape[0]
    return _chunked_counts_products(rng, n_resamples, x[None, :])[:, 0] / n_units
