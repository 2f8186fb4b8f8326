"""The no-learning control's replay is guarded by the training loop's budget callback
(rl.step_callbacks.BudgetStepGuard): each step is checked before it is played and its cost, as
replay_cost counts it, added once it has run; fast, with the workers' play faked (the docker
test tests/rl/test_control_budget.py plays it for real)."""

from __future__ import annotations

import json

import pytest
from policyfactory import toy_tasks
from taskfactory import CONFIG

from editcredit.protocol.budget import Budget, BudgetExceeded, BudgetGuard
from editcredit.rl import control
from editcredit.rl.config import TrainConfig
from editcredit.rl.step_callbacks import BudgetStepGuard


def _cfg(arm: str = "O") -> TrainConfig:
    return TrainConfig.from_dict(
        {**CONFIG["training"]["grpo"], "temperature": 1.0, "arm": arm, "seed": 42}
    )


def _row(step: int, masked: bool = False) -> dict:
    return {"loss_mask": [1, 1, 0, 1], "masked": masked, "Y": 1, "turns": "[]", "step": step}


@pytest.fixture
def played(monkeypatch):
    """play_step faked: two rollouts per step, one masked; the steps played."""
    steps: list[int] = []

    def play(run, step, cursor, by_id, cfg, workers):
        steps.append(step)
        return [_row(step), _row(step, masked=True)], [], {}, cursor

    monkeypatch.setattr(control, "play_step", play)
    return steps


def test_the_replay_registers_the_budget_guard_with_the_replays_cost():
    guard = BudgetGuard("control-s42", Budget.from_mapping({"steps": 2}))
    callbacks = control.replay_callbacks(guard, control.ReplayedStep())
    assert [type(c) for c in callbacks] == [BudgetStepGuard]
    assert control.replay_callbacks(None, control.ReplayedStep()) == []


def test_each_replayed_step_adds_what_replay_cost_counts(played, tmp_path):
    guard = BudgetGuard("control-s42", Budget.from_mapping({"steps": 3}), receipt_dir=tmp_path)
    rows = control.replay_control(_cfg(), 3, toy_tasks(3), None, log=lambda m: None, budget=guard)
    assert played == [1, 2, 3] and len(rows) == 6
    cost, failed = control.replay_cost(rows[:2], 0.0)
    assert guard.spent["steps"] == 3
    assert guard.spent["tokens"] == 3 * cost["tokens"] == 3 * 6
    assert guard.spent["gradings"] == 3 * cost["gradings"]
    assert guard.infra_failures == 3 * failed == 3
    assert not list(tmp_path.iterdir())


def test_a_cap_stops_the_replay_before_the_step_that_would_cross_it(played, tmp_path):
    guard = BudgetGuard("control-s42", Budget.from_mapping({"steps": 1}), receipt_dir=tmp_path)
    with pytest.raises(BudgetExceeded, match="before step 2") as err:
        control.replay_control(_cfg(), 3, toy_tasks(3), None, log=lambda m: None, budget=guard)
    assert played == [1]
    receipt = json.loads(err.value.receipt.read_text())
    assert receipt["stopped_before_step"] == 2 and list(receipt["crossed"]) == ["steps"]
    assert receipt["spent"]["tokens"] == 6


def test_without_a_budget_every_step_is_played(played):
    rows = control.replay_control(_cfg(), 2, toy_tasks(3), None, log=lambda m: None)
    assert played == [1, 2] and len(rows) == 4
