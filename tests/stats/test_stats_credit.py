"""Where the credit went: counts over credit ledgers, checked against hand-made ledgers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from editcredit.stats.credit import NOT_QUERIED, CreditCounts, credit_diagnostics


def ledger(rows) -> pd.DataFrame:
    cols = ["reason", "available", "D", "s", "dY", "dF", "dG"]
    return pd.DataFrame(rows, columns=cols)


ROWS = [
    ("", True, 1.0, 1.0, 1.0, 0.0, 0.0),  # positive, FAIL_TO_PASS
    ("", True, 0.25, 0.5, 0.0, 0.0, -1.0),  # positive, PASS_TO_PASS, capped
    ("", True, -1.25, 0.4, -1.0, 0.0, 1.0),  # negative, both, capped
    ("", True, 0.0, 1.0, 0.0, 0.0, 0.0),  # zero
    ("counterfactual report unavailable", False, None, None, None, None, None),
    (NOT_QUERIED, False, None, None, None, None, None),  # not a query
]
METRICS = pd.DataFrame({"loss_masked_share": [0.1, 0.4, math.nan], "update_tokens": [300, 100, 50]})


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("queries", 5),
        ("available", 4),
        ("positive", 2),
        ("negative", 1),
        ("zero", 1),
        ("scale_capped", 2),
        ("moved_by_fail_to_pass", 1),
        ("moved_by_pass_to_pass", 1),
        ("moved_by_both", 1),
        ("loss_masked_share", pytest.approx((0.1 * 300 + 0.4 * 100) / 400)),
    ],
)
def test_counts_of_a_hand_ledger(key, expected):
    out = credit_diagnostics(
        {"M-s1": ledger(ROWS[:3]), "M-s2": ledger(ROWS[3:])}, {"M-s1": METRICS}
    )
    assert out[key] == expected


def test_ledgers_without_the_parts_count_them_as_unknown():
    old = ledger(ROWS).drop(columns=["dY", "dF", "dG"])
    out = credit_diagnostics({"M-s1": old}, {})
    assert out["positive"] == 2 and out["moved_by_fail_to_pass"] is None
    assert out["loss_masked_share"] is None


def test_an_arm_without_credit_has_zero_queries():
    out = credit_diagnostics({"O-s1": ledger([])}, {"O-s1": METRICS})
    assert out["queries"] == 0 and out["moved_by_both"] is None


def test_the_counts_hold_the_records_keys():
    for out in (
        credit_diagnostics({"M-s1": ledger(ROWS)}, {"M-s1": METRICS}),
        credit_diagnostics({"O-s1": ledger([])}, {}),
    ):
        assert list(out) == list(CreditCounts.__annotations__)
