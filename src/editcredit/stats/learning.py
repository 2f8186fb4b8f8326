"""Is the trainer learning? A run's training pass rate against its no-learning control.

The control (``editcredit.rl.control``) is the base policy replayed on the same task draws with
the same sampling seeds as the run, so the per-step difference is the trainer's effect alone.
Pure: rollout tables in, a plain record out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from editcredit.stats.records import LearningRecord

__all__ = ["delta_ci", "last_quarter", "learning_vs_control", "step_pass_rates"]


def step_pass_rates(rollouts: pd.DataFrame, endpoint_step: int) -> list[float | None]:
    """Mean Y over the unmasked rollouts of each step 1..endpoint (None where a step has none)."""
    live = rollouts[~rollouts["masked"].astype(bool)]
    by_step = live.groupby("step")["Y"].mean()
    return [float(by_step[s]) if s in by_step.index else None for s in range(1, endpoint_step + 1)]


def last_quarter(endpoint_step: int) -> list[int]:
    """The steps of the last quarter of 1..endpoint (at least one step)."""
    n = max(1, math.ceil(endpoint_step / 4))
    return list(range(endpoint_step - n + 1, endpoint_step + 1))


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.mean(known)) if known else None


def learning_vs_control(
    run: pd.DataFrame, control: pd.DataFrame, endpoint_step: int
) -> LearningRecord:
    """Per step and over the last quarter: the run's pass rate, the control's on the same
    draws, and their difference. ``first_step_equal``: step 1 plays the same (base) policy in
    both, so on a deterministic device the two must agree; a mismatch means the draws or the
    seeds are not common."""
    ran = step_pass_rates(run, endpoint_step)
    base = step_pass_rates(control, endpoint_step)
    delta = [None if a is None or b is None else a - b for a, b in zip(ran, base, strict=True)]
    quarter = last_quarter(endpoint_step)
    pick = [s - 1 for s in quarter]
    return {
        "steps": list(range(1, endpoint_step + 1)),
        "run_pass": ran,
        "control_pass": base,
        "delta": delta,
        "last_quarter_steps": quarter,
        "run_pass_last_quarter": _mean([ran[i] for i in pick]),
        "control_pass_last_quarter": _mean([base[i] for i in pick]),
        "delta_last_quarter": _mean([delta[i] for i in pick]),
        "delta_after_first": _mean(delta[1:]),
        "first_step_equal": ran[0] is not None and ran[0] == base[0],
    }


def delta_ci(
    run: pd.DataFrame,
    control: pd.DataFrame,
    steps: list[int],
    resamples: int,
    seed: int,
    level: float,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the run's pass rate minus the control's over ``steps``,
    resampling the paired (step, task) groups: each group's mean Y in the run minus the same
    group's in the control (unmasked rollouts; a group missing on either side is left out)."""

    def groups(rollouts: pd.DataFrame) -> pd.Series:
        live = rollouts[~rollouts["masked"].astype(bool) & rollouts["step"].isin(steps)]
        return live.groupby(["step", "instance_id"])["Y"].mean()

    paired = (groups(run) - groups(control)).dropna().to_numpy(dtype=float)
    if not len(paired):
        raise ValueError(f"no (step, task) group in steps {steps} is in both run and control")
    rng = np.random.default_rng(seed)
    means = paired[rng.integers(0, len(paired), (resamples, len(paired)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)
