"""A planted budget stops a real evaluation (the runner, the journal, the docker sandbox) before
the batch that would cross it: a receipt under logs/budgets/, no slot file, no slots.parquet, no
predictions; a rerun counts the journal's earlier attempts against the budget (METHOD §11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalfakes import FIX, FakeChat, ScriptedGenerator, planted_study
from jobfactory import eval_files, eval_settings
from taskfactory import CONFIG

from editcredit.evaluation.job import eval_model_job
from editcredit.protocol.budget import BudgetExceeded

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SANDBOX = {**CONFIG["sandbox"], "workers": 2}
SETTINGS = {
    "agent.max_turns": 3,
    "sandbox": SANDBOX,
    "evaluation.seed": 11,
    "evaluation.batch_size": 2,  # four tasks, one sample each: two generation batches
    "evaluation.limits": {"regrade": 1, "regenerate": 1},
}
OUT = Path("results/eval/planted/holdout")


def fix_and_submit(first: str, turn: int) -> str:
    return [FIX, "submit"][min(turn, 1)]


@pytest.fixture
def study(tmp_path, monkeypatch, docker_ready):
    monkeypatch.chdir(tmp_path)
    return planted_study(samples=1)


def evaluate(study, budget):
    from editcredit.sandbox.factory import make_sandbox

    tasks_path, model_dir = study
    chat = FakeChat()
    job = eval_files(model_dir, tasks_path)
    assert Path(job.slots) == OUT / "slots.parquet"
    return eval_model_job(
        job,
        eval_settings(SETTINGS),
        gpus=0,
        threads=1,
        config={"c": 1},
        make_sandbox=lambda: make_sandbox("docker", SANDBOX),
        load_policy_fn=lambda: (ScriptedGenerator(chat, fix_and_submit), chat),
        budget=budget,
    )


def test_a_budget_of_one_batch_stops_the_evaluation_with_a_receipt_and_no_output(study):
    with pytest.raises(BudgetExceeded, match="before evaluation batch 2") as err:
        evaluate(study, {"steps": 1})
    receipts = list(Path("logs/budgets").glob("*.json"))
    assert receipts == [err.value.receipt]
    assert receipts[0].name.startswith("eval-planted-holdout-")
    receipt = json.loads(receipts[0].read_text())
    assert list(receipt["crossed"]) == ["steps"]
    assert receipt["spent"]["steps"] == 1 and receipt["spent"]["tokens"] > 0
    assert receipt["unit"] == "step"
    # no partial output: neither slot files nor slots.parquet nor predictions
    assert not (OUT / "slots.parquet").exists()
    assert not (OUT / "predictions").exists()
    assert not list(OUT.glob("toy__*.json"))
    # the attempts made stay in the journal, and a rerun counts them against the budget
    with pytest.raises(BudgetExceeded, match="before evaluation batch 1"):
        evaluate(study, {"steps": 1})
    summary = evaluate(study, {"steps": 2})
    assert summary["budget"]["spent"]["steps"] == 2  # one resumed, one played now
    assert summary["budget"]["spent"]["gradings"] >= 4
    assert summary["resumed_attempts"] > 0
    assert (OUT / "slots.parquet").is_file()
    assert len(list(OUT.glob("toy__*.json"))) == 4


def test_a_budget_that_holds_changes_nothing_and_its_spend_is_recorded(study):
    summary = evaluate(study, {"steps": 2, "gradings": 100})
    assert summary["budget"]["budget"] == {"steps": 2.0, "gradings": 100.0}
    spent = summary["budget"]["spent"]
    assert spent["steps"] == 2 and spent["tokens"] > 0 and spent["wall_seconds"] > 0
    # every final patch graded once, plus the episodes' own test runs (none: fix and submit)
    assert spent["gradings"] == sum(summary["attempts"].get(k, 0) for k in ("grade", "regrade"))
    runs = (OUT.parent.parent / "planted" / "holdout" / "attempts").rglob("runs.jsonl")
    logged = [json.loads(line) for p in runs for line in p.read_text().splitlines()]
    assert logged[-1]["budget"] == summary["budget"]
    assert not Path("logs/budgets").exists()
