"""The gates of a run's start (METHOD §5): the first segment's, and each of the first updates
of an arm with counterfactual credit, checked as soon as it is taken.

Pure: a step's metrics row and parameter counts in, a receipt out. The segment trainer
(:mod:`editcredit.rl.segment`) calls them and stops the run on a failed one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from editcredit.rl.credit import queries_cf

__all__ = [
    "EARLY_UPDATES",
    "FirstSegmentGate",
    "UpdateCheck",
    "UpdateChecks",
    "UpdateGateFailure",
    "UpdateGateRecord",
    "UpdateGateFailed",
    "enforce_update_gate",
    "first_segment_gate",
    "gated_update",
    "update_check",
    "update_gate",
]

#: The first updates of a run that the update gate checks one by one, for the arms whose credit
#: comes from the counterfactual query (METHOD §5), in whichever segments they fall.
EARLY_UPDATES = 3


class UpdateChecks(TypedDict):
    """What an early update's gate checks, each passed or not."""

    credit_reached_loss: bool  # a non-zero D of its step reached some rollout's loss
    finite_loss_and_gradients: bool
    parameters_moved: bool


class UpdateCheck(TypedDict):
    """One early update's gate (:func:`update_check`)."""

    step: int  # the update's training step
    passed: bool  # every check passed
    checks: UpdateChecks
    nonzero_credit_rows: int  # the step's ledger rows with a non-zero D
    credit_rollouts: int  # the step's rollouts whose auxiliary term is not all zero
    moved_tensors: int  # parameter tensors the update changed


class UpdateGateRecord(TypedDict):
    """The early updates checked in one segment (a segment receipt's ``update_gate``)."""

    passed: bool
    updates: list[UpdateCheck]


class UpdateGateFailure(TypedDict):
    """What a failed early update leaves (the run's gate receipt under ``logs/gates/``)."""

    run: str
    arm: str  # a records.Arm value
    seed: int
    failed_step: int
    update_gate: UpdateGateRecord  # the updates checked so far, the failed one last
    metrics: Sequence[Mapping[str, Any]]  # the segment's metrics rows so far (MetricsRow)


class FirstSegmentGate(TypedDict):
    """METHOD §5's gate of a run's first segment (a segment receipt's ``first_segment_gate``).

    ``checks`` holds ``effective_groups``, ``finite_loss_and_gradients`` and
    ``parameters_changed``, then ``credit_reached_loss`` for an arm with counterfactual credit
    and ``early_updates`` where the segment checked some."""

    passed: bool
    checks: dict[str, bool]
    effective_groups: int  # tasks with an unmasked rollout


class UpdateGateFailed(RuntimeError):
    """One of a run's first updates failed its gate; ``record`` is the receipt so far."""

    def __init__(self, message: str, record: UpdateGateFailure) -> None:
        super().__init__(message)
        self.record = record


def gated_update(arm: str, step: int) -> bool:
    """Whether the update of ``step`` (1-based, of the run) is checked on its own: one of the
    first :data:`EARLY_UPDATES` of an arm with counterfactual credit (B, M)."""
    return queries_cf(arm) and 1 <= step <= EARLY_UPDATES


def _finite(metrics_row: Mapping[str, Any]) -> bool:
    return math.isfinite(metrics_row["loss"]) and math.isfinite(metrics_row["grad_norm"])


def update_check(step: int, metrics_row: Mapping[str, Any], moved_tensors: int) -> UpdateCheck:
    """One early update's gate: the credit rows of its step reached its loss (when the ledger
    holds a non-zero D, some rollout carries non-zero credit on valid tokens; a step whose every
    D is zero or unavailable has no credit to deliver, which the record shows as
    ``nonzero_credit_rows`` 0), its loss and gradient norm are finite, and it moved the
    parameters."""
    nonzero = int(metrics_row["cf_nonzero"])
    checks: UpdateChecks = {
        "credit_reached_loss": nonzero == 0 or int(metrics_row["credit_rollouts"]) > 0,
        "finite_loss_and_gradients": _finite(metrics_row),
        "parameters_moved": moved_tensors > 0,
    }
    return {
        "step": int(step),
        "passed": all(checks.values()),
        "checks": checks,
        "nonzero_credit_rows": nonzero,
        "credit_rollouts": int(metrics_row["credit_rollouts"]),
        "moved_tensors": int(moved_tensors),
    }


def update_gate(updates: list[UpdateCheck]) -> UpdateGateRecord:
    """The receipt of the early updates checked in one segment."""
    return {"passed": all(u["passed"] for u in updates), "updates": updates}


def enforce_update_gate(
    run: str,
    arm: str,
    seed: int,
    updates: list[UpdateCheck],
    metrics: Sequence[Mapping[str, Any]],
) -> None:
    """Raise :class:`UpdateGateFailed` when the last checked update failed; its record holds the
    updates checked so far and the metrics rows of the segment's steps so far."""
    last = updates[-1]
    if not last["passed"]:
        record: UpdateGateFailure = {
            "run": run,
            "arm": arm,
            "seed": seed,
            "failed_step": last["step"],
            "update_gate": update_gate(updates),
            "metrics": metrics,
        }
        message = f"{run}: update {last['step']} failed its gate {last['checks']}"
        raise UpdateGateFailed(message, record)


def first_segment_gate(
    arm: str, rows, metrics, changed_tensors: int, updates: list[UpdateCheck] | None = None
) -> FirstSegmentGate:
    """METHOD §5: effective groups, finite loss and gradients, changed parameters, for the
    CF arms credit that reached the loss, and each of the early updates checked in the segment
    (``updates``, from :func:`update_check`; the later ones of a short first segment are in the
    next segments' ``update_gate``). The caller stops the run when ``passed`` is False."""
    groups = {r["instance_id"] for r in rows if not r["masked"]}
    checks = {
        "effective_groups": len(groups) > 0,
        "finite_loss_and_gradients": all(_finite(m) for m in metrics),
        "parameters_changed": changed_tensors > 0,
    }
    if queries_cf(arm):
        checks["credit_reached_loss"] = sum(m["credit_rollouts"] for m in metrics) > 0
    if updates:
        checks["early_updates"] = all(u["passed"] for u in updates)
    return {"passed": all(checks.values()), "checks": checks, "effective_groups": len(groups)}
