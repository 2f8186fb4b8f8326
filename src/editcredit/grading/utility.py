"""Training quantities from a grading: F, G and the utility U (METHOD §3).

:func:`utility` is the one definition of U; the grader's :func:`training_score` and the
counterfactual credit (:mod:`editcredit.rl.credit`) both call it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from editcredit.grading.verdicts import TestOutcome


@dataclass(frozen=True)
class TrainingScore:
    """Y (resolved, strict), F (fraction of FAIL_TO_PASS passing), G (a PASS_TO_PASS
    regression) and U = Y + f_weight*F - g_weight*G. Missing or skipped count as not passing."""

    Y: int
    F: float
    G: int
    U: float


def training_score(
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    tests: dict[str, TestOutcome],
    f_weight: float,
    g_weight: float,
) -> TrainingScore:
    def passed(node_id: str) -> bool:
        outcome = tests.get(node_id)
        return outcome is not None and outcome.status == "passed"

    f = sum(passed(i) for i in fail_to_pass) / len(fail_to_pass)
    g = int(any(not passed(i) for i in pass_to_pass))
    y = int(f == 1.0 and g == 0)
    return TrainingScore(Y=y, F=f, G=g, U=utility(y, f, g, f_weight, g_weight))


def utility(Y: float, F: float, G: float, f_weight: float, g_weight: float) -> float:
    """Utility of one grading report: ``U = Y + f_weight*F - g_weight*G`` (METHOD §3).

    ``Y`` = resolved (0/1), ``F`` = fraction of FAIL_TO_PASS tests passing (in [0, 1]),
    ``G`` = 1 if any expected PASS_TO_PASS test does not pass, else 0. A missing or unparsable
    report must be handled by the caller as an *unavailable* query, never as a zero here.
    """
    Y, F, G = _finite("Y", Y), _finite("F", F), _finite("G", G)
    if Y not in (0.0, 1.0):
        raise ValueError(f"Y must be 0 or 1, got {Y!r}")
    if G not in (0.0, 1.0):
        raise ValueError(f"G must be 0 or 1, got {G!r}")
    if not 0.0 <= F <= 1.0:
        raise ValueError(f"F must lie in [0, 1], got {F!r}")
    return float(Y + _finite("f_weight", f_weight) * F - _finite("g_weight", g_weight) * G)


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value
