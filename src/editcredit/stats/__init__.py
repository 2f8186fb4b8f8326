"""Statistics of the evaluation protocol (METHOD §8 and §9).

Pure functions over result tables; numpy throughout, scipy only for the sign test. Every number
that METHOD marks as a default (resamples, RNG seed, claim threshold) is a parameter here and
comes from config.

- :mod:`~editcredit.stats.scores`: score of one model on one eval set, bounds while unresolved.
- :mod:`~editcredit.stats.arms`: an arm's per-(seed, task) score matrix.
- :mod:`~editcredit.stats.resampling`: bootstrap resample means as count-matrix products.
- :mod:`~editcredit.stats.bootstrap`: percentile CIs (seed x task, task-only, one-dimensional).
- :mod:`~editcredit.stats.signtest`: wins/losses/ties and the sign test.
- :mod:`~editcredit.stats.paired`: paired comparison A - B.
- :mod:`~editcredit.stats.gates`: the pre-registered claim gate.
- :mod:`~editcredit.stats.encounter`: training-side encounter analysis.

Reading result files (imported on their own; they need pandas):

- :mod:`~editcredit.stats.loaders`: eval slots, training rollouts and metrics.
- :mod:`~editcredit.stats.comparisons`: the configured comparisons as JSON records, the gate.
- :mod:`~editcredit.stats.training`: curves, health, failure categories, encounter effect per arm.
- :mod:`~editcredit.stats.jobs`: one function per rule of ``rules/stats.smk``.
"""

from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import (
    BootstrapCI,
    mean_ci,
    percentile_interval,
    seed_task_ci,
    task_ci,
)
from editcredit.stats.encounter import EncounterEffect, encounter_differences, encounter_effect
from editcredit.stats.gates import GateVerdict, claim_gate, gate_verdict
from editcredit.stats.paired import PairedComparison, compare_arms
from editcredit.stats.resampling import (
    counts_from_indices,
    draw_indices,
    gather_resample_means,
    means_from_counts,
    resample_means_1d,
    resample_means_seed_task,
)
from editcredit.stats.scores import EvalSetScore, score_slots, score_table
from editcredit.stats.signtest import SignTest, sign_test

__all__ = [
    "ArmScores",
    "BootstrapCI",
    "EncounterEffect",
    "EvalSetScore",
    "GateVerdict",
    "PairedComparison",
    "SignTest",
    "claim_gate",
    "compare_arms",
    "counts_from_indices",
    "draw_indices",
    "encounter_differences",
    "encounter_effect",
    "gate_verdict",
    "gather_resample_means",
    "mean_ci",
    "means_from_counts",
    "percentile_interval",
    "resample_means_1d",
    "resample_means_seed_task",
    "score_slots",
    "score_table",
    "seed_task_ci",
    "sign_test",
    "task_ci",
]
