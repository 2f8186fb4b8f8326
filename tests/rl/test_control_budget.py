"""A planted budget stops a real no-learning control replay (the toy base, the docker sandbox)
before the step that would cross the run's cap: a receipt under logs/budgets/, no rollouts and
no receipt beside them; a budget that holds leaves its spend in the control's receipt."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from policyfactory import toy_tasks, train_toy_policy
from taskfactory import CONFIG

from editcredit.protocol.budget import BudgetExceeded
from editcredit.rl.train_job import control_replay_job

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def base(tmp_path_factory, docker_sandbox):
    return train_toy_policy(tmp_path_factory.mktemp("base") / "model", docker_sandbox)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    from editcredit.data.freeze import write_parquet

    path = tmp_path_factory.mktemp("suite") / "tasks.parquet"
    write_parquet(toy_tasks(), path)
    return path


def _replay(base, tasks_file, out, budget):
    training = copy.deepcopy(CONFIG["training"])
    training["endpoint_step"] = 2
    training["grpo"].update(tasks_per_step=2, group_size=2, micro_batch_size=4)
    training["ray"] = {"enabled": False, "address": "", "num_workers": 1}
    return control_replay_job(
        seed=42,
        base_model=str(base),
        tasks_path=str(tasks_file),
        controls_path=None,
        out=str(out),
        training=training,
        agent={**CONFIG["agent"], "max_turns": 3, "max_new_tokens": 24},
        reward=CONFIG["reward"],
        grading=CONFIG["grading"],
        sandbox=CONFIG["sandbox"],
        gpus=0,
        threads=1,
        config={"test": True},
        budget=budget,
    )


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
