"""Measured cost per rule, from Snakemake's ``benchmark:`` files (``results/benchmarks/{rule}/``).

The files are the ones the rule render_tables declares (every job before the tables); nothing
here searches the directory, so a leftover of an earlier plan never enters the table.

The rule is the first directory under the root (``{rule}/{job}.tsv``), or the file's stem for a
rule without wildcards (``{rule}.tsv``). Each TSV holds one line per repeat with ``s`` (wall
seconds), ``cpu_time`` (CPU seconds) and ``max_rss`` (peak resident memory, MiB); a value
Snakemake could not measure is ``NA``. A job's value is the mean over its repeats. GPU seconds
are wall seconds times the GPUs the rule requested (from config); Snakemake does not measure
GPU use.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypedDict

__all__ = ["cost_rows", "read_benchmark", "rule_of"]


class BenchmarkTimes(TypedDict):
    """One job's Snakemake benchmark, each the mean over its repeats (None: not measured)."""

    s: float | None  # wall seconds
    cpu_time: float | None  # CPU seconds
    max_rss: float | None  # peak resident memory, MiB


class CostRow(TypedDict):
    """One row of the cost table: a rule's jobs summed (or the ``total`` row, over the rules)."""

    rule: str  # the rule, or ``total``
    jobs: int  # its benchmarked jobs
    wall_s: float | None  # wall seconds, summed (None: none measured)
    cpu_s: float | None  # CPU seconds, summed
    gpu_s: float  # GPU seconds: wall seconds x the GPUs the rule holds
    peak_mib: float | None  # the largest peak resident memory, MiB


def rule_of(root: str | Path, path: str | Path) -> str:
    """The rule of a benchmark file: ``{root}/{rule}/...tsv`` or ``{root}/{rule}.tsv``."""
    parts = Path(path).resolve().relative_to(Path(root).resolve()).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def _value(text: str | None) -> float | None:
    try:
        x = float(text) if text not in (None, "", "NA", "-") else math.nan
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def read_benchmark(path: str | Path) -> BenchmarkTimes:
    """One job's wall seconds, CPU seconds and peak RSS (MiB), each the mean over repeats."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or "s" not in rows[0]:
        raise ValueError(f"{path}: not a Snakemake benchmark file (no 's' column)")
    return {
        "s": _mean([_value(r.get("s")) for r in rows]),
        "cpu_time": _mean([_value(r.get("cpu_time")) for r in rows]),
        "max_rss": _mean([_value(r.get("max_rss")) for r in rows]),
    }


def _add(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def cost_rows(
    root: str | Path, files: Iterable[str | Path], gpus_by_rule: Mapping[str, int]
) -> tuple[list[CostRow], CostRow]:
    """Per-rule totals (jobs, wall s, CPU s, GPU s, peak RSS MiB) and their overall total."""
    root = Path(root)
    by_rule: dict[str, CostRow] = {}
    for f in files:
        rule = rule_of(root, f)
        job = read_benchmark(f)
        row = by_rule.setdefault(
            rule,
            {
                "rule": rule,
                "jobs": 0,
                "wall_s": None,
                "cpu_s": None,
                "gpu_s": 0.0,
                "peak_mib": None,
            },
        )
        row["jobs"] += 1
        row["wall_s"] = _add(row["wall_s"], job["s"])
        row["cpu_s"] = _add(row["cpu_s"], job["cpu_time"])
        row["gpu_s"] += (job["s"] or 0.0) * int(gpus_by_rule.get(rule, 0))
        row["peak_mib"] = _max(row["peak_mib"], job["max_rss"])
    rows = sorted(by_rule.values(), key=lambda r: r["rule"])
    total: CostRow = {
        "rule": "total",
        "jobs": 0,
        "wall_s": None,
        "cpu_s": None,
        "gpu_s": 0.0,
        "peak_mib": None,
    }
    for r in rows:
        total["jobs"] += r["jobs"]
        total["wall_s"] = _add(total["wall_s"], r["wall_s"])
        total["cpu_s"] = _add(total["cpu_s"], r["cpu_s"])
        total["gpu_s"] += r["gpu_s"]
        total["peak_mib"] = _max(total["peak_mib"], r["peak_mib"])
    return rows, total
