"""The configured comparisons, as JSON-ready records (METHOD §8-§9).

Two stages, so that the claim-gate thresholds reach only the last one:

1. :func:`paired_record`: scores per model (bounds while unresolved), the paired difference over
   the paired seeds and tasks, the seed x task and task-only bootstrap CIs with their
   half-widths, W/L/T and the sign test, the split into tasks the runs trained on and tasks they
   never saw (:mod:`editcredit.stats.trained`; empty on the holdout set, which holds no training
   task), and a histogram of the bootstrap distribution of the CI the claim rests on.
2. :func:`gated_record`: that record plus the pre-registered claim gate's verdict.

A comparison is ``{a: M, b: B}`` (all seeds the two arms share in the training plan), optionally
with ``seeds: [42]`` (one seed: a *single-seed contrast*, labelled ``M42 - E42``) and
``evalset`` (default: the first of ``stats.evalsets``). ``b: base`` compares an arm with the
base policy it started from (``O - base``: what training did): the base is one model, so each
seed's run is paired with the same base scores, and the trained / untrained split is by the
arm's runs alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from editcredit.layout import BASE_EVAL_MODEL, run_name
from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import percentile_interval
from editcredit.stats.gates import gate_verdict
from editcredit.stats.loaders import arm_scores, evalset_plan, score_model, unresolved_reasons
from editcredit.stats.paired import PairedComparison, compare_arms
from editcredit.stats.records import (
    BootstrapSettings,
    ComparisonRecord,
    DistributionRecord,
    EvalsetScores,
    GatedRecord,
    GateRecord,
    PairedRecord,
    PartlyTrained,
    PartRecord,
    ScoreSummary,
)
from editcredit.stats.resampling import resample_means_1d, resample_means_seed_task
from editcredit.stats.trained import part_record, split_tasks

__all__ = [
    "ComparisonSpec",
    "comparison_specs",
    "evalset_scores_record",
    "gated_record",
    "paired_record",
    "score_summary",
]


@dataclass(frozen=True)
class ComparisonSpec:
    """One configured comparison A - B.

    Attributes:
        name: its key in ``stats.comparisons`` (and the file name ``results/stats/{name}.json``).
        arm_a, arm_b: the arms.
        seeds: the paired training seeds.
        evalset: the eval set compared on.
    """

    name: str
    arm_a: str
    arm_b: str
    seeds: tuple[int, ...]
    evalset: str

    @property
    def arm_pair(self) -> tuple[str, str]:
        return self.arm_a, self.arm_b

    @property
    def single_seed(self) -> bool:
        return len(self.seeds) == 1

    @property
    def label(self) -> str:
        """``M - B``, or ``M42 - E42`` for a single-seed contrast."""
        if self.single_seed:
            s = self.seeds[0]
            a, b = (arm if arm == BASE_EVAL_MODEL else f"{arm}{s}" for arm in self.arm_pair)
            return f"{a} - {b}"
        return f"{self.arm_a} - {self.arm_b}"

    def model(self, arm: str, seed: int) -> str:
        """The eval model of ``arm`` at ``seed``: ``{arm}-s{seed}``, or the base (one model)."""
        return BASE_EVAL_MODEL if arm == BASE_EVAL_MODEL else run_name(arm, seed)

    def models(self, arm: str) -> list[str]:
        """Eval model names of ``arm`` at the paired seeds (the base once)."""
        return list(dict.fromkeys(self.model(arm, seed) for seed in self.seeds))

    @property
    def all_models(self) -> list[str]:
        return self.models(self.arm_a) + self.models(self.arm_b)

    @property
    def runs(self) -> list[str]:
        """The compared training runs (the base is none)."""
        return [m for m in self.all_models if m != BASE_EVAL_MODEL]


def comparison_specs(
    stats_cfg: Mapping[str, Any], plan: Mapping[str, Sequence[int]]
) -> dict[str, ComparisonSpec]:
    """Resolve ``stats.comparisons`` against the training plan (arm -> seeds).

    Raises:
        ValueError: naming the comparison, when an arm is not in the plan, a requested seed was
            not trained for both arms, or the arms share no seed; or when ``stats.main`` is not
            a comparison.
    """
    specs = {}
    default_evalset = stats_cfg["evalsets"][0]
    main = stats_cfg.get("main")
    if main is not None and main not in stats_cfg["comparisons"]:
        raise ValueError(
            f"config stats.main: {main!r} is not a comparison {sorted(stats_cfg['comparisons'])}"
        )
    for name, entry in stats_cfg["comparisons"].items():
        where = f"config stats.comparisons.{name}"
        a, b = entry["a"], entry["b"]
        if a == BASE_EVAL_MODEL:
            raise ValueError(f"{where}: the base goes second ('b: base': an arm minus its base)")
        for arm in (a, b):
            if arm not in plan and arm != BASE_EVAL_MODEL:
                raise ValueError(f"{where}: arm {arm!r} is not in training.plan {sorted(plan)}")
        shared = [s for s in plan[a] if b == BASE_EVAL_MODEL or s in set(plan[b])]
        seeds = list(entry.get("seeds") or shared)
        bad = [s for s in seeds if s not in shared]
        if bad:
            raise ValueError(f"{where}: seed(s) {bad} not trained for both {a} and {b}")
        if not seeds:
            raise ValueError(f"{where}: {a} and {b} share no training seed")
        evalset = entry.get("evalset", default_evalset)
        specs[name] = ComparisonSpec(name, a, b, tuple(seeds), evalset)
    return specs


def score_summary(frame: pd.DataFrame, tasks: Sequence[str], n_samples: int) -> ScoreSummary:
    """One model's score or bounds on the planned tasks, and unresolved slots by reason."""
    score = score_model(frame, tasks, n_samples)
    return {
        "n_samples": score.n_samples,
        "n_planned": score.n_planned,
        "n_known": score.n_known,
        "n_successes": score.n_successes,
        "n_unresolved": score.n_unresolved,
        "n_missing_rows": score.n_missing_rows,
        "n_tasks": len(score.tasks),
        "resolved": score.resolved,
        "score": score.score,
        "lower": score.lower,
        "upper": score.upper,
        "unresolved_by_reason": unresolved_reasons(frame),
    }


def evalset_scores_record(
    evalset: str, slots: Mapping[str, pd.DataFrame], n_samples: int | None = None
) -> EvalsetScores:
    """Every model's score (or bounds) on one eval set, over the eval set's planned tasks.

    ``n_samples``: the planned samples per task (None: taken from the rows).
    """
    tasks, n_samples = evalset_plan(slots.values(), n_samples)
    return {
        "evalset": evalset,
        "n_tasks": len(tasks),
        "n_samples": n_samples,
        "models": {m: score_summary(f, tasks, n_samples) for m, f in slots.items()},
    }


def _comparison_dict(comp: PairedComparison) -> ComparisonRecord:
    ci = comp.primary_ci
    return {
        **comp.to_dict(),
        "single_seed": comp.single_seed,
        "n_seeds": len(comp.seeds),
        "n_tasks": len(comp.tasks),
        "primary_ci": None if ci is None else ci.to_dict(),
        "half_width": None if ci is None else ci.half_width,
    }


class _TrainedSplit(TypedDict):
    """The trained / untrained split of a paired record (its keys, in its order)."""

    trained: PartRecord
    untrained: PartRecord
    partly_trained: PartlyTrained


def _trained_split(
    spec: ComparisonSpec,
    a: ArmScores,
    b: ArmScores,
    trained_by_run: Mapping[str, set[str]],
    boot: BootstrapSettings,
) -> _TrainedSplit:
    """The comparison on the tasks each seed's runs trained on, and on those they never saw."""
    splits = {}
    for seed in spec.seeds:
        runs = [spec.model(arm, seed) for arm in spec.arm_pair if arm != BASE_EVAL_MODEL]
        missing = [r for r in runs if r not in trained_by_run]
        if missing:
            raise ValueError(f"comparison {spec.name}: no training rollouts of run(s) {missing}")
        splits[seed] = split_tasks(a.tasks, [trained_by_run[r] for r in runs])
    return {
        "trained": part_record(
            a,
            b,
            {s: sp.trained for s, sp in splits.items()},
            **boot,
            label=f"{spec.label} (trained)",
        ),
        "untrained": part_record(
            a,
            b,
            {s: sp.untrained for s, sp in splits.items()},
            **boot,
            label=f"{spec.label} (untrained)",
        ),
        "partly_trained": {
            "n_cells": sum(len(sp.partly) for sp in splits.values()),
            "tasks_by_seed": {str(s): len(sp.partly) for s, sp in splits.items()},
        },
    }


def _distribution(
    comp: PairedComparison, d: np.ndarray, boot: BootstrapSettings, bins: int
) -> DistributionRecord | None:
    """Histogram of the resample means behind the primary CI (same draws, same interval)."""
    ci = comp.primary_ci
    if ci is None:
        return None
    rng = np.random.default_rng(boot["rng_seed"])
    if comp.single_seed:
        means = resample_means_1d(d.mean(axis=0), n_resamples=boot["n_resamples"], rng=rng)
    else:
        means = resample_means_seed_task(d, n_resamples=boot["n_resamples"], rng=rng)
    if percentile_interval(means, boot["level"]) != (ci.lower, ci.upper):
        raise RuntimeError(f"{comp.label}: the histogram's resamples do not reproduce the CI")
    counts, edges = np.histogram(means, bins=bins)
    return {
        "scheme": ci.scheme,
        "counts": counts.tolist(),
        "edges": edges.tolist(),
        "mean": float(means.mean()),
        "sd": float(means.std(ddof=1)) if means.size > 1 else 0.0,
    }


def paired_record(
    spec: ComparisonSpec,
    slots: Mapping[str, pd.DataFrame],
    trained_by_run: Mapping[str, set[str]],
    *,
    n_resamples: int,
    rng_seed: int,
    level: float,
    histogram_bins: int,
    n_samples: int | None = None,
) -> PairedRecord:
    """The comparison ``spec`` on its eval set, without the gate (see the module docstring).

    Args:
        spec: the comparison.
        slots: slots table of every model of ``spec.all_models`` on ``spec.evalset``.
        trained_by_run: per compared run, the tasks in its training rollouts.
        n_resamples, rng_seed, level: the bootstrap (config ``stats.bootstrap``).
        histogram_bins: bins of the stored bootstrap distribution.
        n_samples: planned samples per task of the eval set (None: taken from the rows).
    """
    missing = [m for m in spec.all_models if m not in slots]
    if missing:
        raise ValueError(f"comparison {spec.name}: no slots for model(s) {missing}")
    tasks, n_samples = evalset_plan((slots[m] for m in spec.all_models), n_samples)
    by_arm = {}
    for arm in (spec.arm_a, spec.arm_b):
        frames = {seed: slots[spec.model(arm, seed)] for seed in spec.seeds}
        by_arm[arm] = arm_scores(arm, frames, tasks, n_samples)
    a, b = by_arm[spec.arm_a], by_arm[spec.arm_b]
    boot: BootstrapSettings = {"n_resamples": n_resamples, "rng_seed": rng_seed, "level": level}
    comp = compare_arms(a, b, **boot, label=spec.label)
    distribution = None
    if comp.resolved:
        distribution = _distribution(comp, a.values - b.values, boot, histogram_bins)
    return {
        "comparison": spec.name,
        "label": spec.label,
        "kind": comp.kind,
        "single_seed": spec.single_seed,
        "evalset": spec.evalset,
        "arm_a": spec.arm_a,
        "arm_b": spec.arm_b,
        "seeds": list(spec.seeds),
        "n_tasks": len(tasks),
        "n_samples": n_samples,
        "bootstrap": {**boot, "method": "percentile"},
        "scores": {m: score_summary(slots[m], tasks, n_samples) for m in spec.all_models},
        "all": _comparison_dict(comp),
        **_trained_split(spec, a, b, trained_by_run, boot),
        "bootstrap_distribution": distribution,
    }


def gated_record(
    paired: PairedRecord, *, min_difference: float, ci_lower_above: float
) -> GatedRecord:
    """``paired`` plus the claim gate's verdict on its whole-set comparison.

    The CI is the one the claim rests on (seed x task; task-only for a single-seed contrast).
    Unresolved slots fail the gate. ``gate.line`` is the printed one-line verdict.
    """
    comp = paired["all"]
    ci = comp["primary_ci"]
    verdict = gate_verdict(
        comp["difference"],
        None if ci is None else ci["lower"],
        min_difference=min_difference,
        ci_lower_threshold=ci_lower_above,
        resolved=comp["resolved"],
        label=paired["label"],
        ci_scheme=None if ci is None else ci["scheme"],
    )
    gate: GateRecord = {**verdict.to_dict(), "line": str(verdict)}
    return {**paired, "gate": gate}
