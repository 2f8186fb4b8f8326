"""A planted budget stops a real no-learning control replay (the toy base, the docker sandbox)
before the step that would cross the run's cap: a receipt under logs/budgets/, no rollouts and
no receipt beside them; a budget that holds leaves its spend in the control's receipt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobfactory import NO_RAY, run_control_replay

from editcredit.protocol.budget import BudgetExceeded

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _replay(base, tasks_file, out, budget):
    overrides = {
        **NO_RAY,
        "training.endpoint_step": 2,
        "training.grpo.tasks_per_step": 2,
        "training.grpo.group_size": 2,
        "training.grpo.micro_batch_size": 4,
        "agent.max_turns": 3,
        "agent.max_new_tokens": 24,
    }
    return run_control_replay(42, base, out, tasks_file, overrides, budget=budget)


def test_a_budget_of_one_step_stops_the_replay_with_a_receipt_and_no_rollouts(
    base, tasks_file, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    out = Path("results/training/control/s42.parquet")
    with pytest.raises(BudgetExceeded, match="before step 2") as err:
        _replay(base, tasks_file, out, {"steps": 1})
    assert not out.parent.exists()  # neither rollouts nor their receipt, nor a temp file
    receipts = list(Path("logs/budgets").glob("*.json"))
    assert receipts == [err.value.receipt]
    assert receipts[0].name.startswith("control-s42-")
    receipt = json.loads(receipts[0].read_text())
    assert receipt["stopped_before_step"] == 2 and list(receipt["crossed"]) == ["steps"]
    assert receipt["spent"]["steps"] == 1 and receipt["spent"]["tokens"] > 0
    assert receipt["spent"]["gradings"] >= 4  # two tasks x two samples graded at least


def test_a_budget_that_holds_leaves_its_spend_in_the_receipt(
    base, tasks_file, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    out = Path("results/training/control/s42.parquet")
    receipt = _replay(base, tasks_file, out, {"steps": 2, "tokens": 10**6})
    written = json.loads(out.with_suffix(".json").read_text())
    assert written["budget"] == receipt["budget"]
    ledger = receipt["budget"]
    assert ledger["scope"] == "control-s42"
    assert ledger["spent"]["steps"] == 2 and ledger["budget"]["steps"] == 2
    assert ledger["spent"]["gradings"] >= receipt["rollouts"] == 8
    assert not Path("logs/budgets").exists()
