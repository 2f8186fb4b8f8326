"""Budget caps: checked before each step, a receipt when one would be crossed (METHOD §11)."""

from __future__ import annotations

import json

import pytest

from editcredit.protocol.budget import Budget, BudgetExceeded, BudgetGuard

STEP = {"tokens": 100, "gradings": 10, "gpu_hours": 0.0, "wall_seconds": 5.0}

# (caps, steps that run before the guard stops the job (None: all 4), the crossed key)
CASES = [
    ({}, None, None),
    ({"steps": 1}, 1, "steps"),
    ({"steps": 4}, None, None),
    ({"tokens": 100}, 1, "tokens"),  # one step's worth: the second would cross
    ({"tokens": 250}, 2, "tokens"),
    ({"gradings": 40}, None, None),  # exactly the cap: allowed
    ({"gradings": 39}, 3, "gradings"),
    ({"wall_seconds": 12}, 2, "wall_seconds"),
    ({"tokens": 0, "gpu_hours": 0}, None, None),  # 0: no cap
]


@pytest.mark.parametrize("caps,stops_after,key", CASES)
def test_guard_stops_before_the_step_that_would_cross_a_cap(tmp_path, caps, stops_after, key):
    guard = BudgetGuard("O-s42", Budget.from_mapping(caps), receipt_dir=tmp_path)
    done = 0
    try:
        for step in range(1, 5):
            guard.check(step)
            guard.add(STEP, infra_failures=1)
            done += 1
    except BudgetExceeded as exc:
        receipt = json.loads(exc.receipt.read_text())
        assert str(exc.receipt) in str(exc)
        assert receipt["stopped_before_step"] == done + 1
        assert list(receipt["crossed"]) == [key]
        assert receipt["spent"]["tokens"] == 100 * done
        assert receipt["infra_failures"] == done  # apart from the spend
        assert receipt["budget"] == {k: float(v) for k, v in caps.items()}
    assert done == (4 if stops_after is None else stops_after)
    assert len(list(tmp_path.iterdir())) == (0 if stops_after is None else 1)


def test_spend_of_earlier_segments_counts(tmp_path):
    guard = BudgetGuard(
        "O-s42", Budget.from_mapping({"steps": 2}), spent={"steps": 2}, receipt_dir=tmp_path
    )
    with pytest.raises(BudgetExceeded):
        guard.check(3)


@pytest.mark.parametrize("cfg", [{"token": 1}, {"tokens": -1}, {"tokens": "many"}])
def test_malformed_budgets_are_refused(cfg):
    with pytest.raises(ValueError, match="budget"):
        Budget.from_mapping(cfg, where="budgets.run")


def test_the_ledger_and_a_stop_receipt_are_their_records(tmp_path):
    from record_shapes import assert_record

    from editcredit.protocol.budget import BudgetLedger, BudgetStopReceipt, split_ledger

    guard = BudgetGuard("O-s42", Budget.from_mapping({"steps": 1}), receipt_dir=tmp_path)
    guard.check(1)
    guard.add(STEP)
    assert_record(guard.ledger(), BudgetLedger)
    kept, timed = split_ledger(guard.ledger())
    assert_record(kept, BudgetLedger)
    assert list(timed) == ["wall_seconds", "gpu_hours"] and "wall_seconds" not in kept["spent"]
    with pytest.raises(BudgetExceeded) as exc:
        guard.check(2)
    assert_record(json.loads(exc.value.receipt.read_text()), BudgetStopReceipt, ordered=False)
