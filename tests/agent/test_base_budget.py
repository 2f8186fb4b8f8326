"""A planted budget stops a real base_model job (the scripted experts in the docker sandbox,
then SFT) before the unit that would cross it: a receipt under logs/budgets/ and no model
directory; a budget that holds trains the same bytes as none and leaves a spend record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from policyfactory import SFT_DEFAULTS, TOY_ARCH, toy_tasks
from taskfactory import CONFIG

from editcredit.agent.base_job import base_model_job
from editcredit.protocol.budget import BudgetExceeded

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MODEL = {
    "seed": 0,
    "tokenizer_vocab": 400,
    "tokenizer_whole_numbers_below": 0,
    "architecture": TOY_ARCH,
    "experts": {
        "kind": "oracle",
        "episodes_per_task": 2,
        "detour_prob": 0.5,
        "run_prob": 0.5,
        "rename_prob": 0.0,
        "rename_locals": True,
        "fragment_style": "minimal",
        "rename_copies": 0,
    },
    "sft": {
        **SFT_DEFAULTS,
        "lr": 0.01,
        "batch_size": 4,
        "max_steps": 150,  # two SFT chunks of at most 100 steps
        "warmup_steps": 5,
        "observation_loss_weight": 0.3,
        "threads": 1,
    },
}


@pytest.fixture
def suite(tmp_path, monkeypatch, docker_ready):
    from editcredit.data.freeze import write_parquet

    monkeypatch.chdir(tmp_path)
    path = Path("data/frozen/toy/tasks.parquet")
    path.parent.mkdir(parents=True)
    write_parquet(toy_tasks(), path)
    return path


def _train(tasks, out, budget):
    return base_model_job(
        model_cfg=MODEL,
        agent_cfg={**CONFIG["agent"], "max_turns": 4},
        sandbox_cfg={**CONFIG["sandbox"], "workers": 2},
        tasks_path=str(tasks),
        controls_path=None,
        out_dir=str(out),
        gpus=0,
        budget=budget,
    )


def test_a_budget_of_one_unit_stops_the_base_model_with_a_receipt_and_no_model(suite):
    out = Path("models/base/tiny")
    with pytest.raises(BudgetExceeded, match="before SFT chunk 1") as err:
        _train(suite, out, {"steps": 1})  # the expert batch, then the first SFT chunk
    assert not out.exists()
    receipts = list(Path("logs/budgets").glob("*.json"))
    assert receipts == [err.value.receipt]
    receipt = json.loads(receipts[0].read_text())
    assert receipt["scope"] == "base_model-tiny"
    assert list(receipt["crossed"]) == ["steps"] and receipt["unit"] == "sft"
    assert receipt["spent"]["steps"] == 1 and receipt["spent"]["gradings"] > 0
    assert not Path("logs/budgets/spend").exists()


def test_a_budget_that_holds_trains_the_same_model_and_records_its_spend(suite):
    free, capped = Path("models/base/free"), Path("models/base/capped")
    _train(suite, free, None)
    _train(suite, capped, {"steps": 3, "gradings": 1000})  # one expert batch, two SFT chunks
    assert (free / "model.safetensors").read_bytes() == (capped / "model.safetensors").read_bytes()
    records = sorted(Path("logs/budgets/spend").glob("base_model-capped-*.json"))
    assert len(records) == 1
    ledger = json.loads(records[0].read_text())
    assert ledger["budget"] == {"steps": 3.0, "gradings": 1000.0}
    assert ledger["spent"]["steps"] == 3 and 0 < ledger["spent"]["gradings"] <= 1000
    assert ledger["spent"]["wall_seconds"] > 0
    assert not list(Path("logs/budgets").glob("*.json"))  # no stop receipt
