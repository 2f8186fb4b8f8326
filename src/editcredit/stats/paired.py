"""Paired comparison of arm A against arm B on one eval set (METHOD §9).

The paired difference is ``D[seed, task] = A[seed, task] - B[seed, task]``, pairing models by
training seed; it is averaged equally over the paired seeds and tasks. Uncertainty: the
two-dimensional (seed x task) bootstrap CI, and beside it the task-only CI (seeds fixed). Per
task (difference averaged over seeds): wins, losses, ties, and a sign test over non-tied tasks.

While any slot of either arm is unresolved there is no point estimate, no CI, no W/L/T and no
sign test; only the difference bounds ``[A_lo - B_hi, A_hi - B_lo]``. A comparison with a single
paired seed (e.g. M42 - E42) is a *single-seed contrast*: it has only the task-only CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from editcredit.stats._records import record_to_dict
from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import BootstrapCI, seed_task_ci, task_ci
from editcredit.stats.records import BootstrapSettings, PairedFields
from editcredit.stats.signtest import SignTest, sign_test

__all__ = ["PairedComparison", "compare_arms"]

SINGLE_SEED = "single-seed contrast"
MULTI_SEED = "paired seed x task comparison"


@dataclass(frozen=True)
class PairedComparison:
    """Result of a paired comparison A - B.

    Attributes:
        label: e.g. ``"M - B"``.
        kind: ``"paired seed x task comparison"`` or ``"single-seed contrast"``.
        arm_a, arm_b: arm names.
        seeds: the paired training seeds.
        tasks: the tasks, in order.
        resolved: True when neither arm has an unresolved slot.
        difference: mean of ``D`` over seeds and tasks; ``None`` when unresolved.
        difference_lower, difference_upper: bounds ``[A_lo - B_hi, A_hi - B_lo]`` of the
            difference (both equal ``difference`` when resolved).
        ci_seed_task: the (seed x task) bootstrap CI; ``None`` when unresolved or single-seed.
        ci_task: the task-only CI (seeds fixed); ``None`` when unresolved.
        sign: wins/losses/ties per task and the sign test; ``None`` when unresolved.
        task_differences: per-task difference averaged over seeds; ``None`` when unresolved.
    """

    label: str
    kind: str
    arm_a: str
    arm_b: str
    seeds: tuple[Any, ...]
    tasks: tuple[str, ...]
    resolved: bool
    difference: float | None
    difference_lower: float
    difference_upper: float
    ci_seed_task: BootstrapCI | None
    ci_task: BootstrapCI | None
    sign: SignTest | None
    task_differences: tuple[float, ...] | None

    @property
    def single_seed(self) -> bool:
        """True for a single-seed contrast (one paired seed: task-only CI)."""
        return self.kind == SINGLE_SEED

    @property
    def primary_ci(self) -> BootstrapCI | None:
        """The CI a claim rests on: seed x task, or task-only for a single-seed contrast."""
        return self.ci_task if self.single_seed else self.ci_seed_task

    def to_dict(self) -> PairedFields:
        """JSON-ready dict of the fields."""
        return cast(PairedFields, record_to_dict(self))


def compare_arms(
    a: ArmScores,
    b: ArmScores,
    *,
    n_resamples: int,
    rng_seed: int,
    level: float,
    label: str | None = None,
) -> PairedComparison:
    """Paired comparison A - B over the seeds and tasks the two arms share exactly.

    Args:
        a, b: scores of the two arms; they must have the same seed labels and the same task ids
            (order may differ: B is aligned to A). Restrict first with :meth:`ArmScores.subset`
            (e.g. to seed 42 for a single-seed contrast, or to the in-pool tasks).
        n_resamples: bootstrap resamples (config: 10,000).
        rng_seed: bootstrap RNG seed (config: 20260927); both CIs use it.
        level: confidence level of both CIs.
        label: defaults to ``"{a.arm} - {b.arm}"``.

    Raises:
        ValueError: when the seed or task sets differ, naming what is missing.
    """
    if set(a.seeds) != set(b.seeds):
        raise ValueError(
            f"{a.arm} and {b.arm} are not paired: seeds {sorted(map(str, a.seeds))} vs "
            f"{sorted(map(str, b.seeds))}; restrict with ArmScores.subset(seeds=...)"
        )
    if set(a.tasks) != set(b.tasks):
        only_a = sorted(set(a.tasks) - set(b.tasks))[:5]
        only_b = sorted(set(b.tasks) - set(a.tasks))[:5]
        raise ValueError(
            f"{a.arm} and {b.arm} cover different tasks: only in {a.arm}: {only_a}, "
            f"only in {b.arm}: {only_b}"
        )
    b = b.subset(seeds=a.seeds, tasks=a.tasks)
    single = len(a.seeds) == 1
    resolved = a.resolved and b.resolved
    common: dict[str, Any] = {
        "label": label if label is not None else f"{a.arm} - {b.arm}",
        "kind": SINGLE_SEED if single else MULTI_SEED,
        "arm_a": a.arm,
        "arm_b": b.arm,
        "seeds": a.seeds,
        "tasks": a.tasks,
        "resolved": resolved,
    }
    if not resolved:
        return PairedComparison(
            **common,
            difference=None,
            difference_lower=float(a.lower.mean() - b.upper.mean()),
            difference_upper=float(a.upper.mean() - b.lower.mean()),
            ci_seed_task=None,
            ci_task=None,
            sign=None,
            task_differences=None,
        )
    d = a.values - b.values
    difference = float(d.mean())
    per_task = d.mean(axis=0)
    boot: BootstrapSettings = {"n_resamples": n_resamples, "rng_seed": rng_seed, "level": level}
    return PairedComparison(
        **common,
        difference=difference,
        difference_lower=difference,
        difference_upper=difference,
        ci_seed_task=None if single else seed_task_ci(d, **boot),
        ci_task=task_ci(d, **boot),
        sign=sign_test(per_task),
        task_differences=tuple(float(x) for x in per_task),
    )
