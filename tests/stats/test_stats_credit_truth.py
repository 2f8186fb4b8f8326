"""Credit against the known truth of the blocks (stats/credit_truth.py): the sign table, the
agreement and the positive credit mass on tokens of turns that fixed a planted bug."""

from __future__ import annotations

import pandas as pd
import pytest

from editcredit.records import CreditReason
from editcredit.stats.credit_truth import (
    EVERY_VALID_TOKEN,
    SELECTED_BLOCK,
    credit_truth,
    credit_truth_by_arm,
)

NOT_QUERIED = CreditReason.NOT_QUERIED.value
CF_UNAVAILABLE = CreditReason.COUNTERFACTUAL_UNAVAILABLE.value


def _query(key, block, D, L=100, l1=0.0, reason=""):
    return {
        "rollout_key": key,
        "selected_block": block,
        "available": D is not None,
        "reason": reason,
        "D": D,
        "L": L,
        "credit_l1": l1,
    }


LEDGER = pd.DataFrame(
    [
        _query("r1", 0, 1.25, 100, 10.0),  # fix, D > 0
        _query("r2", 1, 0.0),  # other, D = 0
        _query("r3", 0, -0.25, 100, 2.5),  # harmful, D < 0
        _query("r4", 0, 0.25, 50, 2.5),  # other, D > 0 (another block of r4 fixed a bug)
        _query("r5", 0, None, reason=NOT_QUERIED),  # the rate did not send it
        _query("r6", 0, None, reason=CF_UNAVAILABLE),  # sent, no D
        _query("r7", 0, 0.5, 100, 5.0),  # its selected block has no label
    ]
)
TRUTH = pd.DataFrame(
    [
        {"rollout_key": k, "block": b, "label": lab, "tokens": n}
        for k, b, lab, n in [
            ("r1", 0, "fix", 20),
            ("r1", 1, "other", 5),
            ("r1", 2, "fix", 10),
            ("r2", 0, "fix", 7),
            ("r2", 1, "other", 4),
            ("r3", 0, "harmful", 8),
            ("r4", 0, "other", 6),
            ("r4", 1, "fix", 10),
            ("r5", 0, "fix", 3),
            ("r6", 0, "fix", 3),
        ]
    ]
)
TABLE = {
    "fix": {"negative": 0, "zero": 0, "positive": 1},
    "other": {"negative": 0, "zero": 1, "positive": 1},
    "harmful": {"negative": 1, "zero": 0, "positive": 0},
}


@pytest.mark.parametrize(
    "placement, on_fixes",
    [
        (SELECTED_BLOCK, 10.0),  # M: r1's whole mass, none of r4's
        (EVERY_VALID_TOKEN, 10.0 * 30 / 100 + 2.5 * 10 / 50),  # B: the fix tokens' share
    ],
)
def test_credit_truth(placement, on_fixes):
    found = credit_truth(LEDGER, TRUTH, placement)
    assert found["table"] == TABLE
    assert found["unlabelled"] == 1
    assert found["agreement"] == pytest.approx(3 / 4)
    assert found["positive_mass"] == pytest.approx(12.5)
    assert found["positive_mass_on_fixes"] == pytest.approx(on_fixes)
    assert found["positive_mass_share"] == pytest.approx(on_fixes / 12.5)


def test_no_queries_no_shares():
    empty = credit_truth(LEDGER.iloc[0:0], TRUTH, SELECTED_BLOCK)
    assert empty["agreement"] is None and empty["positive_mass_share"] is None
    assert all(n == 0 for row in empty["table"].values() for n in row.values())
    no_positive = credit_truth(LEDGER[LEDGER["rollout_key"] == "r3"], TRUTH, SELECTED_BLOCK)
    assert no_positive["agreement"] == 1.0 and no_positive["positive_mass_share"] is None


def test_without_truth_every_query_is_unlabelled():
    found = credit_truth(LEDGER, TRUTH.iloc[0:0], EVERY_VALID_TOKEN)
    assert found["unlabelled"] == 5 and found["agreement"] is None


@pytest.mark.parametrize(
    "truth, placement, error",
    [
        (TRUTH, "somewhere", "unknown credit placement"),
        (TRUTH.assign(label="good"), SELECTED_BLOCK, "unknown block labels"),
    ],
)
def test_bad_inputs_are_refused(truth, placement, error):
    with pytest.raises(ValueError, match=error):
        credit_truth(LEDGER, truth, placement)


def test_by_arm_reads_the_arms_with_a_query():
    found = credit_truth_by_arm({"O": LEDGER.iloc[0:0], "B": LEDGER, "M": LEDGER}, TRUTH)
    assert list(found) == ["B", "M"]
    assert found["M"] == credit_truth(LEDGER, TRUTH, SELECTED_BLOCK)
    assert found["B"] == credit_truth(LEDGER, TRUTH, EVERY_VALID_TOKEN)
