"""The statistics jobs of the workflow: result files in, one JSON result (with provenance) out.

One function per rule of ``rules/stats.smk``; the scripts only unpack ``snakemake`` and call
them, so everything here is testable without Snakemake.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from editcredit.io.provenance import write_result_json
from editcredit.layout import parse_eval_slots, parse_segment_dir
from editcredit.stats._records import to_plain
from editcredit.stats.comparisons import (
    ComparisonSpec,
    evalset_scores_record,
    gated_record,
    paired_record,
)
from editcredit.stats.credit_truth import CreditTruthRecord, credit_truth_record, read_truth
from editcredit.stats.loaders import (
    read_credit,
    read_metrics,
    read_rollouts,
    read_slots,
    training_tasks,
)
from editcredit.stats.records import GatedRecord, PairedRecord, TrainingRecord
from editcredit.stats.training import training_record

__all__ = [
    "credit_truth_job",
    "evalset_scores_job",
    "gate_job",
    "paired_job",
    "segment_files",
    "training_job",
]

log = logging.getLogger(__name__)


def _model_of(path: str | Path) -> str:
    return parse_eval_slots(path)[0]


def segment_files(segments: Sequence[str | Path], name: str) -> dict[str, list[Path]]:
    """``{run: [runs/{run}/step_{N}/{name}, ...]}``, steps in order; a missing file is an error."""
    out: dict[str, list[tuple[int, Path]]] = {}
    for seg in segments:
        run, step = parse_segment_dir(seg)
        path = Path(seg) / name
        if not path.is_file():
            raise FileNotFoundError(f"{path}: segment {seg} has no {name} (docs/outputs.md)")
        out.setdefault(run, []).append((step, path))
    return {run: [p for _, p in sorted(items)] for run, items in out.items()}


def evalset_scores_job(
    slots: Sequence[str | Path],
    out: str | Path,
    evalset: str,
    config: Any,
    n_samples: int | None = None,
) -> None:
    """Rule evalset_scores: every model's score (or bounds) on one eval set."""
    tables = {_model_of(p): read_slots(p) for p in slots}
    record = evalset_scores_record(evalset, tables, n_samples)
    for model, s in record["models"].items():
        shown = f"{s['score']:.4f}" if s["resolved"] else f"[{s['lower']:.4f}, {s['upper']:.4f}]"
        log.info(
            "%s on %s: %s (%d of %d slots known)",
            model,
            evalset,
            shown,
            s["n_known"],
            s["n_planned"],
        )
    write_result_json(out, to_plain(record), slots, config)


def paired_job(
    spec: Mapping[str, Any],
    slots: Sequence[str | Path],
    segments: Sequence[str | Path],
    out: str | Path,
    *,
    bootstrap: Mapping[str, Any],
    histogram_bins: int,
    config: Any,
    n_samples: int | None = None,
) -> PairedRecord:
    """Rule paired: the comparison without the gate (see :func:`paired_record`)."""
    comparison = ComparisonSpec(
        name=spec["name"],
        arm_a=spec["arm_a"],
        arm_b=spec["arm_b"],
        seeds=tuple(spec["seeds"]),
        evalset=spec["evalset"],
    )
    tables = {_model_of(p): read_slots(p) for p in slots}
    by_run = segment_files(segments, "rollouts.parquet")
    rollouts = [p for paths in by_run.values() for p in paths]
    trained_by_run = {run: training_tasks(paths) for run, paths in by_run.items()}
    record = paired_record(
        comparison,
        tables,
        trained_by_run,
        n_resamples=int(bootstrap["n_resamples"]),
        rng_seed=int(bootstrap["rng_seed"]),
        level=float(bootstrap["level"]),
        histogram_bins=int(histogram_bins),
        n_samples=n_samples,
    )
    write_result_json(out, to_plain(record), [*slots, *rollouts], config)
    return record


def gate_job(
    paired: str | Path,
    out: str | Path,
    *,
    min_difference: float,
    ci_lower_above: float,
    config: Any,
) -> GatedRecord:
    """Rule compare: the paired record plus the claim gate's verdict, printed to the log."""
    record = json.loads(Path(paired).read_text(encoding="utf-8"))
    record.pop("provenance", None)
    gated = gated_record(record, min_difference=min_difference, ci_lower_above=ci_lower_above)
    print(gated["gate"]["line"])
    write_result_json(out, to_plain(gated), [paired], config)
    return gated


def training_job(
    arm: str,
    segments: Sequence[str | Path],
    controls: Mapping[str, str | Path],
    out: str | Path,
    *,
    endpoint_step: int,
    n_buckets: int,
    encounter_ks: Sequence[int],
    bootstrap: Mapping[str, Any],
    config: Any,
) -> TrainingRecord:
    """Rule training_analysis: curves, health, failures, learning against the no-learning
    control (``controls``: each run's control rollouts) and encounter effect of one arm."""
    metrics_files = segment_files(segments, "metrics.parquet")
    rollout_files = segment_files(segments, "rollouts.parquet")
    credit_files = segment_files(segments, "credit.parquet")
    record = training_record(
        arm,
        {run: read_metrics(paths) for run, paths in metrics_files.items()},
        {run: read_rollouts(paths) for run, paths in rollout_files.items()},
        controls_by_run={run: read_rollouts([path]) for run, path in controls.items()},
        credit_by_run={run: read_credit(paths) for run, paths in credit_files.items()},
        endpoint_step=endpoint_step,
        n_buckets=n_buckets,
        encounter_ks=encounter_ks,
        n_resamples=int(bootstrap["n_resamples"]),
        rng_seed=int(bootstrap["rng_seed"]),
        level=float(bootstrap["level"]),
    )
    every = (metrics_files, rollout_files, credit_files)
    read = [p for files in every for ps in files.values() for p in ps]
    read += [Path(p) for p in controls.values()]
    write_result_json(out, to_plain(record), read, config)
    return record


def credit_truth_job(
    segments: Sequence[str | Path], out: str | Path, *, config: Any
) -> CreditTruthRecord:
    """Rule credit_truth: the credit of B and M against the known truth of the selected blocks
    (``stats.credit_truth``), from their runs' segments' ledgers and truth rows."""
    credit_files = segment_files(segments, "credit.parquet")
    truth_files = segment_files(segments, "truth.parquet")
    record = credit_truth_record(
        {run: read_credit(paths) for run, paths in credit_files.items()},
        read_truth(p for paths in truth_files.values() for p in paths),
    )
    for arm, result in record["arms"].items():
        agreement, share = result["agreement"], result["positive_mass_share"]
        log.info(
            "%s: %d labelled queries, agreement %s, positive mass on fix turns %s",
            arm,
            sum(sum(signs.values()) for signs in result["table"].values()),
            "-" if agreement is None else f"{agreement:.3f}",
            "-" if share is None else f"{share:.3f}",
        )
    read = [p for files in (credit_files, truth_files) for ps in files.values() for p in ps]
    write_result_json(out, to_plain(record), read, config)
    return record
