"""A planted budget stops a real training segment before the step that would cross it: a
receipt under the budget directory, no partial checkpoint; a sufficient budget changes nothing
and its ledger (budget, spend, infrastructure failures apart) lands in segment.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobfactory import TOY_SEGMENT, run_segment

from editcredit.protocol.budget import BudgetExceeded

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _segment(step, previous, out, tasks_file, k, budget):
    return run_segment(
        "M-s42",
        step,
        previous,
        out,
        tasks_file,
        {**TOY_SEGMENT, "training.segment_steps": k},
        budget=budget,
        budget_dir=str(Path(out).parent / "budgets"),
    )


def test_a_budget_of_one_step_stops_the_segment_with_a_receipt_and_no_checkpoint(
    base, tasks_file, tmp_path
):
    out = tmp_path / "M-s42" / "step_2"
    with pytest.raises(BudgetExceeded) as err:
        _segment(2, base, out, tasks_file, 2, {"steps": 1})
    assert not out.exists()  # no partial checkpoint
    receipts = list((tmp_path / "M-s42" / "budgets").glob("*.json"))
    assert receipts == [err.value.receipt]
    receipt = json.loads(receipts[0].read_text())
    assert receipt["stopped_before_step"] == 2
    assert list(receipt["crossed"]) == ["steps"]
    assert receipt["spent"]["steps"] == 1 and receipt["spent"]["tokens"] > 0
    assert receipt["spent"]["gradings"] >= 6  # two tasks x three samples graded at least


def test_a_budget_that_holds_changes_nothing_and_is_carried_to_the_next_segment(
    base, tasks_file, tmp_path
):
    one = tmp_path / "run" / "step_1"
    receipt = _segment(1, base, one, tasks_file, 1, {"steps": 1, "tokens": 10**6})
    ledger = json.loads((one / "segment.json").read_text())["budget"]
    assert ledger == receipt["budget"]
    assert ledger["spent"]["steps"] == 1 and ledger["budget"]["steps"] == 1
    # the run's cap counts the earlier segment: step 2 would be the run's second step
    with pytest.raises(BudgetExceeded, match="before step 2"):
        _segment(2, one, tmp_path / "run" / "step_2", tasks_file, 1, {"steps": 1})
    assert not (tmp_path / "run" / "step_2").exists()
