"""The attempt ledger, table-driven from METHOD §8."""

from __future__ import annotations

from dataclasses import replace

import pytest
from taskfactory import CONFIG

from editcredit.evaluation.ledger import (
    AttemptView,
    LedgerError,
    Limits,
    check_history,
    next_step,
)

GEN_OK = AttemptView("generate", "patch")
GEN_FAIL = AttemptView("generate", "infra_failure")
REGEN_OK = AttemptView("regenerate", "patch")
REGEN_FAIL = AttemptView("regenerate", "infra_failure")


def grade(kind="grade", of=0, outcome="report", verdict=None, vk=""):
    return AttemptView(kind, outcome, verdict, vk, of)


ONE = grade(verdict=1, vk="valid_1")
ZERO = grade(verdict=0, vk="valid_0")
EMPTY = grade(verdict=0, vk="empty_patch")
NULL = grade(verdict=None, vk="unresolved")
G_FAIL = grade(outcome="infra_failure")
R_FAIL = grade("regrade", outcome="infra_failure")
R_ONE = grade("regrade", verdict=1, vk="valid_1")

#: The default config's retries (evaluation.limits: one re-grade, one regeneration).
LIMITS = Limits(**CONFIG["evaluation"]["limits"])

# (history, limits, expected (action, state, verdict, reason, of))
TABLE = [
    ([], LIMITS, ("generate", "pending", None, "", None)),
    ([GEN_OK], LIMITS, ("grade", "pending", None, "", 0)),
    ([GEN_OK, ONE], LIMITS, ("final", "decided", 1, "valid_1", 1)),
    ([GEN_OK, ZERO], LIMITS, ("final", "decided", 0, "valid_0", 1)),
    ([GEN_OK, EMPTY], LIMITS, ("final", "decided", 0, "empty_patch", 1)),
    # a valid report with a null verdict decides the slot as unresolved: never retried
    ([GEN_OK, NULL], LIMITS, ("final", "unresolved", None, "unresolved_verdict", 1)),
    # infrastructure failure after a patch: one re-grade of the same patch
    ([GEN_OK, G_FAIL], LIMITS, ("regrade", "pending", None, "", 0)),
    ([GEN_OK, G_FAIL, R_ONE], LIMITS, ("final", "decided", 1, "valid_1", 2)),
    ([GEN_OK, G_FAIL, R_FAIL], LIMITS, ("final", "unresolved", None, "infra_after_patch", 2)),
    (
        [GEN_OK, G_FAIL],
        replace(LIMITS, regrade=0),
        ("final", "unresolved", None, "infra_after_patch", 1),
    ),
    ([GEN_OK, G_FAIL, R_FAIL], replace(LIMITS, regrade=2), ("regrade", "pending", None, "", 0)),
    # infrastructure failure before a patch: one replacement generation
    ([GEN_FAIL], LIMITS, ("regenerate", "pending", None, "", None)),
    ([GEN_FAIL, REGEN_OK], LIMITS, ("grade", "pending", None, "", 1)),
    (
        [GEN_FAIL, REGEN_OK, grade(of=1, verdict=0, vk="valid_0")],
        LIMITS,
        ("final", "decided", 0, "valid_0", 2),
    ),
    ([GEN_FAIL, REGEN_FAIL], LIMITS, ("final", "unresolved", None, "infra_before_patch", 1)),
    (
        [GEN_FAIL],
        replace(LIMITS, regenerate=0),
        ("final", "unresolved", None, "infra_before_patch", 0),
    ),
    # both limits in one slot: the replacement's patch may still be re-graded once
    (
        [GEN_FAIL, REGEN_OK, grade(of=1, outcome="infra_failure")],
        LIMITS,
        ("regrade", "pending", None, "", 1),
    ),
    (
        [
            GEN_FAIL,
            REGEN_OK,
            grade(of=1, outcome="infra_failure"),
            grade("regrade", of=1, outcome="infra_failure"),
        ],
        LIMITS,
        ("final", "unresolved", None, "infra_after_patch", 3),
    ),
]


@pytest.mark.parametrize("history,limits,expected", TABLE)
def test_next_step(history, limits, expected):
    d = next_step(history, limits)
    assert (d.action, d.state, d.verdict, d.reason, d.of) == expected
    # every table history is one the ledger itself would produce
    assert check_history(history, limits) == d


@pytest.mark.parametrize(
    "history,message",
    [
        ([GEN_OK, ONE, grade("regrade")], "after the slot was decided"),
        ([GEN_OK, ZERO, GEN_OK], "after the slot was decided"),
        ([GEN_OK, NULL, grade("regrade")], "after the slot was unresolved"),
        ([ONE], "expected generate"),
        ([GEN_OK, GEN_OK], "expected grade"),
        ([GEN_FAIL, GEN_OK], "expected regenerate"),
        ([GEN_FAIL, REGEN_FAIL, REGEN_OK], "after the slot was unresolved"),
        ([GEN_OK, G_FAIL, R_FAIL, grade("regrade")], "after the slot was unresolved"),
        ([GEN_OK, G_FAIL, G_FAIL], "expected regrade"),
        ([GEN_FAIL, REGEN_OK, grade(of=0)], "grades attempt 0, expected 1"),
        ([GEN_OK, grade(outcome="patch")], "cannot end with a patch"),
        ([AttemptView("generate", "report")], "cannot end with a report"),
        ([GEN_OK, grade(verdict=2)], "verdict 2"),
    ],
)
def test_impossible_histories_are_rejected(history, message):
    with pytest.raises(LedgerError, match=message):
        check_history(history, LIMITS, "slot x")


def test_limits_must_not_be_negative():
    with pytest.raises(ValueError):
        replace(LIMITS, regrade=-1)


@pytest.mark.parametrize("regrade,regenerate", [(0, 0), (1, 1), (2, 3)])
def test_retries_never_exceed_the_limits_under_constant_failure(regrade, regenerate):
    """A sandbox that always fails: the ledger stops exactly at the limits."""
    limits = Limits(regrade, regenerate)
    history: list[AttemptView] = []
    while not (d := next_step(history, limits)).final:
        if d.action in ("generate", "regenerate"):
            history.append(AttemptView(d.action, "infra_failure"))
    assert sum(a.kind == "regenerate" for a in history) == regenerate
    assert d.reason == "infra_before_patch"
    history = [GEN_OK]
    while not (d := next_step(history, limits)).final:
        history.append(grade(d.action, of=d.of, outcome="infra_failure"))
    assert sum(a.kind == "regrade" for a in history) == regrade
    assert d.reason == "infra_after_patch"
