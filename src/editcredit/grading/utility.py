"""Training quantities from a grading: F, G and the utility U (METHOD §3)."""

from __future__ import annotations

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
    f_weight: float = 0.25,
    g_weight: float = 0.25,
) -> TrainingScore:
    def passed(node_id: str) -> bool:
        outcome = tests.get(node_id)
        return outcome is not None and outcome.status == "passed"

    f = sum(passed(i) for i in fail_to_pass) / len(fail_to_pass)
    g = int(any(not passed(i) for i in pass_to_pass))
    y = int(f == 1.0 and g == 0)
    return TrainingScore(Y=y, F=f, G=g, U=y + f_weight * f - g_weight * g)
