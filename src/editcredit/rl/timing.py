"""A segment's volatile facts: what the clock measures while it trains (its sidecar).

The phases' wall seconds of each step, the segment's wall time and the run's budget time spent
are measured facts the cost table reports, but a rebuild never reproduces them; they live in the
segment's volatile sidecar (``runs/{run}/step_{N}/segment.volatile.json``,
``editcredit.io.volatile``), never in ``metrics.parquet`` or ``segment.json``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from editcredit.protocol.budget import TIMED_COSTS

if TYPE_CHECKING:
    from editcredit.protocol.budget import BudgetGuard
    from editcredit.rl.segment import SegmentSpec

#: the phases whose wall seconds a step measures (volatile: the segment's sidecar holds them)
PHASES = ("seconds_rollout", "seconds_counterfactual", "seconds_update")


def step_seconds(seconds: dict[str, float]) -> dict[str, float]:
    """A step's phase seconds by :data:`PHASES` (rollout includes its final grading)."""
    return {
        "seconds_rollout": seconds["rollout"] + seconds["grading"],
        "seconds_counterfactual": seconds["counterfactual"],
        "seconds_update": seconds["update"],
    }


def segment_volatile(
    spec: SegmentSpec,
    seconds: list[dict[str, float]],
    started: float,
    budget: BudgetGuard | None = None,
) -> dict[str, Any]:
    """The segment's volatile facts (its sidecar): wall seconds in all and per step, each
    step's phase seconds (``steps``: ``step`` and :data:`PHASES`), and the run's budget time
    spent so far (``budget_spent``: :data:`TIMED_COSTS`, all its segments)."""
    elapsed = time.monotonic() - started
    first = spec.start_step + 1
    out: dict[str, Any] = {
        "run": spec.run,
        "seconds": elapsed,
        "seconds_per_step": elapsed / spec.steps,
        "steps": [{"step": first + i, **s} for i, s in enumerate(seconds)],
    }
    if budget is not None:
        out["budget_spent"] = {k: budget.spent[k] for k in TIMED_COSTS}
    return out
