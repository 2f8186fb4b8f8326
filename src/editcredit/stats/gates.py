"""The pre-registered claim gate (METHOD §9).

A claim of improvement passes iff the paired difference is at least ``min_difference`` (score
units: +4 points = 0.04) AND the CI lower bound is strictly above ``ci_lower_threshold`` (0).
With unresolved slots there is no point estimate and no CI, so the gate cannot pass and says so.
The verdict is printed either way: ``str(verdict)`` is one line, ``PASS`` or ``FAIL`` with why.

``min_difference`` is compared with a slack of ``atol`` (default 1e-9) so that a difference of
exactly 4 points that floating point renders as 0.039999999999999994 is not refused; one slot
weighs at least ~1e-6 of the score in any real eval set, so the slack cannot admit a smaller
true difference. The CI bound test is strict and has no slack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from editcredit.stats._records import record_to_dict
from editcredit.stats.paired import PairedComparison
from editcredit.stats.records import VerdictRecord

__all__ = ["GateVerdict", "claim_gate", "gate_verdict"]


@dataclass(frozen=True)
class GateVerdict:
    """Verdict of the claim gate.

    Attributes:
        label: the comparison, e.g. ``"M - B"``.
        passed: True iff every condition holds.
        verdict: ``"pass"`` or ``"fail"``.
        reasons: one line per condition, saying whether and why it held or failed.
        difference: the paired difference, ``None`` when unresolved.
        ci_lower: lower end of the CI used, ``None`` when there is none.
        ci_scheme: which CI was used, ``None`` when there is none.
        min_difference: required difference (score units).
        ci_lower_threshold: the CI lower bound must exceed this.
        difference_ok: the difference condition held.
        ci_ok: the CI condition held.
    """

    label: str
    passed: bool
    verdict: Literal["pass", "fail"]
    reasons: tuple[str, ...]
    difference: float | None
    ci_lower: float | None
    ci_scheme: str | None
    min_difference: float
    ci_lower_threshold: float
    difference_ok: bool = False
    ci_ok: bool = False

    def __str__(self) -> str:
        return f"claim gate {self.label}: {self.verdict.upper()} ({'; '.join(self.reasons)})"

    def to_dict(self) -> VerdictRecord:
        """JSON-ready dict of the fields."""
        return cast(VerdictRecord, record_to_dict(self))


def gate_verdict(
    difference: float | None,
    ci_lower: float | None,
    *,
    min_difference: float,
    ci_lower_threshold: float = 0.0,
    resolved: bool = True,
    label: str = "A - B",
    ci_scheme: str | None = None,
    atol: float = 1e-9,
) -> GateVerdict:
    """Apply the gate to plain numbers.

    Args:
        difference: paired difference in score units (None: not available).
        ci_lower: lower end of the claim's CI (None: not available).
        min_difference: required difference, from config (0.04 for +4 points).
        ci_lower_threshold: the CI lower end must be strictly above this.
        resolved: False when unresolved slots exist; the gate then fails whatever the numbers.
        label: name of the comparison, for the record and the printed line.
        ci_scheme: which CI ``ci_lower`` came from, for the record.
        atol: slack of the ``difference >= min_difference`` test (see the module docstring).
    """
    reasons: list[str] = []
    if not resolved:
        reasons.append("unresolved slots: no point estimate or CI while K < N, no claim")
    difference_ok = difference is not None and difference + atol >= min_difference
    if difference is None:
        reasons.append(f"no difference (needs >= {min_difference:.4g})")
    elif difference_ok:
        reasons.append(f"difference {difference:.4f} >= {min_difference:.4g}")
    else:
        reasons.append(f"difference {difference:.4f} < {min_difference:.4g}")
    ci_ok = ci_lower is not None and ci_lower > ci_lower_threshold
    if ci_lower is None:
        reasons.append(f"no CI (lower bound needs > {ci_lower_threshold:.4g})")
    elif ci_ok:
        reasons.append(f"CI lower {ci_lower:.4f} > {ci_lower_threshold:.4g}")
    else:
        reasons.append(f"CI lower {ci_lower:.4f} <= {ci_lower_threshold:.4g}")
    ok = resolved and difference_ok and ci_ok
    return GateVerdict(
        label=label,
        passed=ok,
        verdict="pass" if ok else "fail",
        reasons=tuple(reasons),
        difference=difference,
        ci_lower=ci_lower,
        ci_scheme=ci_scheme,
        min_difference=min_difference,
        ci_lower_threshold=ci_lower_threshold,
        difference_ok=difference_ok,
        ci_ok=ci_ok,
    )


def claim_gate(
    comparison: PairedComparison,
    *,
    min_difference: float,
    ci_lower_threshold: float = 0.0,
    atol: float = 1e-9,
) -> GateVerdict:
    """Apply the gate to a paired comparison.

    The CI is the (seed x task) bootstrap CI; for a single-seed contrast, the task-only CI (the
    only one it has). Unresolved slots fail the gate.
    """
    ci = comparison.primary_ci
    return gate_verdict(
        comparison.difference,
        None if ci is None else ci.lower,
        min_difference=min_difference,
        ci_lower_threshold=ci_lower_threshold,
        resolved=comparison.resolved,
        label=comparison.label,
        ci_scheme=None if ci is None else ci.scheme,
        atol=atol,
    )
