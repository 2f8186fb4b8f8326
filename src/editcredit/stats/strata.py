"""Comparisons by the number of bugs of the holdout task, and the truth control (METHOD §9).

The paper reports M - B and M - O, and beside them the truth control T - O where
``training.controls`` plans T, on the single-bug and the multi-bug tasks of the first of
``stats.evalsets`` separately (:data:`STRATA`: 1 bug; 2 or more bugs, read from the task
records' ``bugs``), and on the whole set; each with both CIs of
:func:`~editcredit.stats.paired.compare_arms` (seed x task, and task-only with the seeds fixed),
and the minimum detectable difference at the seed x task bootstrap's standard error
(:mod:`editcredit.stats.power`).

T - O is a control: labelled so, it enters no claim gate and no pre-registered comparison
(``stats.main``, ``stats.comparisons``). A stratum without a task, and a comparison whose arms
the plan does not train, are reported absent (``present: false`` and why), never as zero.

:func:`strata_specs` works the comparisons out from the training plan, :func:`stratify_tasks`
splits the tasks, :func:`strata_record` computes the JSON-ready record of rule strata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.layout import run_name
from editcredit.stats.arms import ArmScores
from editcredit.stats.paired import PairedComparison, compare_arms
from editcredit.stats.power import ALPHA, POWER, bootstrap_se, minimum_detectable_difference
from editcredit.stats.power import z_multiplier as power_multiplier

__all__ = [
    "ALL",
    "STRATA",
    "BugStratum",
    "StrataSpec",
    "strata_record",
    "strata_specs",
    "stratify_tasks",
]


@dataclass(frozen=True)
class BugStratum:
    """Tasks by their number of planted bugs: ``min_bugs`` to ``max_bugs`` (None: no upper end)."""

    name: str
    label: str
    min_bugs: int
    max_bugs: int | None

    def holds(self, n_bugs: int) -> bool:
        return n_bugs >= self.min_bugs and (self.max_bugs is None or n_bugs <= self.max_bugs)


#: the strata, in the paper's order
STRATA = (BugStratum("single", "1 bug", 1, 1), BugStratum("multi", "2+ bugs", 2, None))
#: the whole eval set (every stratum)
ALL = BugStratum("all", "all", 1, None)

#: the comparisons reported by stratum: the pre-registered arms', then the controls'
_ARM_PAIRS = (("M", "B"), ("M", "O"))
_CONTROL_PAIRS = (("T", "O"),)


@dataclass(frozen=True)
class StrataSpec:
    """One comparison A - B of the strata table.

    Attributes:
        arm_a, arm_b: the arms (or the control, for ``arm_a`` of a control comparison).
        seeds: the paired seeds (those both train); empty when the comparison is absent.
        control: a control comparison (T - O): never gated, never pre-registered.
        absent: why the comparison is absent ("" when present).
    """

    arm_a: str
    arm_b: str
    seeds: tuple[int, ...]
    control: bool
    absent: str = ""

    @property
    def label(self) -> str:
        return f"{self.arm_a} - {self.arm_b}"

    def models(self, arm: str) -> list[str]:
        return [run_name(arm, seed) for seed in self.seeds]

    @property
    def all_models(self) -> list[str]:
        return self.models(self.arm_a) + self.models(self.arm_b)

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm_a": self.arm_a,
            "arm_b": self.arm_b,
            "seeds": list(self.seeds),
            "control": self.control,
            "absent": self.absent,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StrataSpec:
        return cls(d["arm_a"], d["arm_b"], tuple(d["seeds"]), bool(d["control"]), d["absent"])


def _spec(
    a: str, b: str, trained: Mapping[str, Sequence[int]], control: bool, why_missing: str
) -> StrataSpec:
    missing = [arm for arm in (a, b) if arm not in trained]
    if missing:
        return StrataSpec(a, b, (), control, why_missing.format(arms=", ".join(missing)))
    shared = tuple(s for s in trained[a] if s in set(trained[b]))
    if not shared:
        return StrataSpec(a, b, (), control, f"{a} and {b} share no training seed")
    return StrataSpec(a, b, shared, control)


def strata_specs(
    plan: Mapping[str, Sequence[int]], controls: Mapping[str, Sequence[int]] | None
) -> list[StrataSpec]:
    """M - B, M - O and the control T - O, at the seeds both of each pair train.

    ``plan``: ``training.plan`` (arm -> seeds); ``controls``: ``training.controls`` (None when
    no layer plans one). A pair the plan cannot pair is kept, absent, with the reason.
    """
    controls = dict(controls or {})
    trained = {**plan, **controls}
    specs = [_spec(a, b, plan, False, "training.plan trains no {arms}") for a, b in _ARM_PAIRS]
    specs += [
        _spec(a, b, trained, True, "training.controls plans no {arms}")
        if a in controls
        else StrataSpec(a, b, (), True, f"training.controls plans no {a}")
        for a, b in _CONTROL_PAIRS
    ]
    return specs


def stratify_tasks(
    tasks: Sequence[str], bug_counts: Mapping[str, int]
) -> dict[str, tuple[str, ...]]:
    """The tasks of each stratum of :data:`STRATA` (by name), in the order of ``tasks``.

    Raises:
        ValueError: naming a task without a bug count, or with a count below 1.
    """
    missing = [t for t in tasks if t not in bug_counts]
    if missing:
        raise ValueError(f"no task record for {len(missing)} task(s), e.g. {missing[:3]}")
    bad = [t for t in tasks if int(bug_counts[t]) < 1]
    if bad:
        raise ValueError(f"task {bad[0]} has {bug_counts[bad[0]]} bugs (at least 1)")
    return {s.name: tuple(t for t in tasks if s.holds(int(bug_counts[t]))) for s in STRATA}


def _ci(ci: Any) -> dict[str, Any] | None:
    return None if ci is None else ci.to_dict()


def _comparison(
    comp: PairedComparison, d: Any, *, n_resamples: int, rng_seed: int, alpha: float, power: float
) -> dict[str, Any]:
    """The part of a paired comparison the strata table shows, with the MDD."""
    out: dict[str, Any] = {
        "resolved": comp.resolved,
        "n_seeds": len(comp.seeds),
        "difference": comp.difference,
        "difference_lower": comp.difference_lower,
        "difference_upper": comp.difference_upper,
        "ci_seed_task": _ci(comp.ci_seed_task),
        "ci_task": _ci(comp.ci_task),
        "sign": None if comp.sign is None else comp.sign.to_dict(),
        "se": None,
        "se_scheme": None,
        "mdd": None,
    }
    if comp.resolved:
        se = bootstrap_se(d, n_resamples=n_resamples, rng_seed=rng_seed)
        out["se"] = se.se
        out["se_scheme"] = se.scheme
        out["mdd"] = minimum_detectable_difference(se.se, alpha=alpha, power=power)
    return out


def _stratum(
    stratum: BugStratum,
    tasks: tuple[str, ...],
    a: ArmScores | None,
    b: ArmScores | None,
    boot: Mapping[str, Any],
    alpha: float,
    power: float,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stratum": stratum.name,
        "label": stratum.label,
        "present": bool(tasks),
        "n_tasks": len(tasks),
        "absent": "" if tasks else f"no task with {stratum.label}",
        "comparison": None,
    }
    if tasks and a is not None and b is not None:
        a, b = a.subset(tasks=tasks), b.subset(tasks=tasks)
        comp = compare_arms(a, b, **boot, label=f"{a.arm} - {b.arm} ({stratum.label})")
        d = a.values - b.values if comp.resolved else None
        out["comparison"] = _comparison(
            comp,
            d,
            n_resamples=boot["n_resamples"],
            rng_seed=boot["rng_seed"],
            alpha=alpha,
            power=power,
        )
    return out


def strata_record(
    specs: Sequence[StrataSpec],
    scores: Mapping[str, ArmScores],
    tasks: Sequence[str],
    bug_counts: Mapping[str, int],
    *,
    evalset: str,
    n_resamples: int,
    rng_seed: int,
    level: float,
    alpha: float = ALPHA,
    power: float = POWER,
) -> dict[str, Any]:
    """Every comparison of ``specs`` on the whole eval set and on each stratum (JSON-ready).

    Args:
        specs: the comparisons (:func:`strata_specs`); an absent one is recorded as such.
        scores: per arm of a present comparison, its scores at (at least) the comparison's
            seeds over ``tasks`` (:func:`~editcredit.stats.loaders.arm_scores`).
        tasks: the eval set's planned tasks.
        bug_counts: task -> its number of planted bugs (every planned task).
        evalset: the eval set's name.
        n_resamples, rng_seed, level: the bootstrap (config ``stats.bootstrap``).
        alpha, power: of the minimum detectable difference (METHOD §9).
    """
    strata = stratify_tasks(tasks, bug_counts)
    boot = {"n_resamples": n_resamples, "rng_seed": rng_seed, "level": level}
    comparisons = []
    for spec in specs:
        entry: dict[str, Any] = {"label": spec.label, **spec.to_dict()}
        a = b = None
        if not spec.absent:
            a = scores[spec.arm_a].subset(seeds=spec.seeds)
            b = scores[spec.arm_b].subset(seeds=spec.seeds)
        groups = [(ALL, tuple(tasks))] + [(s, strata[s.name]) for s in STRATA]
        entry["strata"] = [_stratum(s, ts, a, b, boot, alpha, power) for s, ts in groups]
        comparisons.append(entry)
    return {
        "evalset": evalset,
        "n_tasks": len(tasks),
        "strata": [
            {"stratum": s.name, "label": s.label, "n_tasks": len(strata[s.name])} for s in STRATA
        ],
        "bootstrap": {**boot, "method": "percentile"},
        "power": {
            "alpha": alpha,
            "power": power,
            "multiplier": power_multiplier(alpha, power),
            "se": "sd of the seed x task bootstrap resample means (task-only for one seed)",
        },
        "comparisons": comparisons,
    }
