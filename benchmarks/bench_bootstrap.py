"""Benchmark: seed x task bootstrap, plain index gather (anchor) vs editcredit.stats.

Run from the repository root: ``python benchmarks/bench_bootstrap.py``. Pins itself to one core
(CPU affinity and single-threaded BLAS/OpenMP, set before numpy is imported), times both on a
3 seeds x 500 tasks paired-difference matrix with 10,000 resamples (best of 5 each, alternating,
after one untimed warm-up), prints the times and their ratio, and writes them as JSON to
``benchmarks/out/bootstrap.json``.

Both draw from ``numpy.random.default_rng(RNG_SEED)`` in the same order (seed indices, then task
indices), so they resample identically; the data are multiples of 1/16, so the two intervals must
agree exactly, and the script checks that they do.
"""

from __future__ import annotations

import os

_CPU = min(os.sched_getaffinity(0))
os.sched_setaffinity(0, {_CPU})
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
try:
    from editcredit.stats import seed_task_ci
except ImportError:  # not installed: use the source tree
    sys.path.insert(0, str(ROOT / "src"))
    from editcredit.stats import seed_task_ci

N_SEEDS, N_TASKS, N_RESAMPLES = 3, 500, 10_000
RNG_SEED = 20260927
LEVEL = 0.95
REPEATS = 5
TARGET_MS = 60.0
OUT = ROOT / "benchmarks" / "out" / "bootstrap.json"


def anchor_ci(d: np.ndarray, n_resamples: int, rng_seed: int, level: float) -> tuple[float, float]:
    """The straightforward vectorised gather: B x S x T values, mean, percentiles."""
    n_seeds, n_tasks = d.shape
    rng = np.random.default_rng(rng_seed)
    seed_idx = rng.integers(0, n_seeds, size=(n_resamples, n_seeds))
    task_idx = rng.integers(0, n_tasks, size=(n_resamples, n_tasks))
    means = d[seed_idx[:, :, None], task_idx[:, None, :]].mean(axis=(1, 2))
    alpha = 100 * (1 - level) / 2
    lo, hi = np.percentile(means, [alpha, 100 - alpha])
    return float(lo), float(hi)


def fast_ci(d: np.ndarray, n_resamples: int, rng_seed: int, level: float) -> tuple[float, float]:
    """editcredit.stats.seed_task_ci (count matrices and matrix products)."""
    ci = seed_task_ci(d, n_resamples=n_resamples, rng_seed=rng_seed, level=level)
    return ci.lower, ci.upper


def main() -> None:
    g = np.random.default_rng(0)
    # paired differences of task scores with n = 16 samples per task
    d = g.integers(0, 17, size=(N_SEEDS, N_TASKS)) - g.integers(0, 17, size=(N_SEEDS, N_TASKS))
    d = d / 16.0
    impls: dict[str, Callable[..., tuple[float, float]]] = {"anchor": anchor_ci, "fast": fast_ci}
    args = (d, N_RESAMPLES, RNG_SEED, LEVEL)
    results = {name: fn(*args) for name, fn in impls.items()}  # warm-up, untimed
    times: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(REPEATS):
        for name, fn in impls.items():
            start = time.perf_counter()
            ci = fn(*args)
            times[name].append((time.perf_counter() - start) * 1e3)
            if ci != results[name]:
                raise RuntimeError(f"{name}: CI changed between runs: {ci} vs {results[name]}")
    anchor_ms, fast_ms = min(times["anchor"]), min(times["fast"])
    report = {
        "shape": {"seeds": N_SEEDS, "tasks": N_TASKS},
        "n_resamples": N_RESAMPLES,
        "rng_seed": RNG_SEED,
        "level": LEVEL,
        "repeats": REPEATS,
        "anchor_ms": round(anchor_ms, 3),
        "fast_ms": round(fast_ms, 3),
        "ratio_anchor_over_fast": round(anchor_ms / fast_ms, 3),
        "target_ms": TARGET_MS,
        "fast_meets_target": fast_ms <= TARGET_MS,
        "anchor_times_ms": [round(t, 3) for t in times["anchor"]],
        "fast_times_ms": [round(t, 3) for t in times["fast"]],
        "ci_anchor": list(results["anchor"]),
        "ci_fast": list(results["fast"]),
        "ci_identical": results["anchor"] == results["fast"],
        "cpu": _CPU,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"seed x task bootstrap, {N_SEEDS} seeds x {N_TASKS} tasks x {N_RESAMPLES} resamples, "
        f"one core (cpu {_CPU}), best of {REPEATS}"
    )
    print(f"  anchor (index gather): {anchor_ms:8.2f} ms")
    print(f"  editcredit.stats:      {fast_ms:8.2f} ms  (target <= {TARGET_MS:.0f} ms)")
    print(f"  ratio anchor/fast:     {anchor_ms / fast_ms:8.2f} x")
    print(f"  CI anchor {results['anchor']}, fast {results['fast']}")
    print(f"  identical: {report['ci_identical']}")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
