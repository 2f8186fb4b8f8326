"""Is the trainer learning? A run's training pass rate against its no-learning control.

The control (``editcredit.rl.control``) is the base policy replayed on the same task draws with
the same sampling seeds as the run, so the per-step difference is the trainer's effect alone.
Pure: rollout tables in, a plain record out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["last_quarter", "learning_vs_control", "step_pass_rates"]


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
) -> dict[str, Any]:
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
