"""Training quarantine (config ``training.quarantine``): named train tasks leave every run's
training pool with their reason, and a quarantined id that is not a train task is refused."""

from __future__ import annotations

import copy
import json

import pytest
from policyfactory import toy_tasks
from taskfactory import CONFIG

from editcredit.data.freeze import write_parquet
from editcredit.policy.base_job import training_tasks


@pytest.fixture
def tasks_file(tmp_path):
    tasks = toy_tasks(4)
    tasks[3] = tasks[3].model_copy(update={"split": "holdout"})
    path = tmp_path / "tasks.parquet"
    write_parquet(tasks, path)
    return path


@pytest.fixture
def controls_file(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"flagged_ids": ["toy__calc__add_1"]}))
    return path


@pytest.mark.parametrize(
    ("quarantine", "controls", "pool"),
    [
        (None, False, ["toy__calc__add_0", "toy__calc__add_1", "toy__calc__add_2"]),
        ({}, True, ["toy__calc__add_0", "toy__calc__add_2"]),
        ({"toy__calc__add_2": "flaky image"}, False, ["toy__calc__add_0", "toy__calc__add_1"]),
        ({"toy__calc__add_2": "flaky image"}, True, ["toy__calc__add_0"]),
        ({"toy__calc__add_1": "also flagged"}, True, ["toy__calc__add_0", "toy__calc__add_2"]),
    ],
)
def test_quarantined_tasks_leave_the_pool(tasks_file, controls_file, quarantine, controls, pool):
    got = training_tasks(str(tasks_file), str(controls_file) if controls else None, quarantine)
    assert [t.instance_id for t in got] == pool


@pytest.mark.parametrize("bad", ["toy__calc__add_3", "no_such_task"])  # holdout; unknown
def test_a_quarantined_id_that_is_not_a_train_task_is_refused(tasks_file, bad):
    with pytest.raises(ValueError, match=f"training.quarantine: {bad} not a train task"):
        training_tasks(str(tasks_file), None, {bad: "typo", "toy__calc__add_0": "fine"})


def test_the_control_replay_leaves_them_out_and_lists_them(tasks_file, tmp_path, monkeypatch):
    from editcredit.rl import train_job

    class Workers:
        def close(self):
            pass

        def describe(self):
            return {"kind": "fake"}

    pools = []
    monkeypatch.setattr(train_job, "make_workers", lambda *a, **k: Workers())
    monkeypatch.setattr(
        train_job, "replay_control", lambda cfg, steps, pool, w, **kw: pools.append(pool) or []
    )
    training = copy.deepcopy(CONFIG["training"])
    training["quarantine"] = {"toy__calc__add_0": "its image lost a dependency"}
    out = tmp_path / "control" / "s42.parquet"
    (tmp_path / "base").mkdir()  # a provenance input only: replay_control is faked
    receipt = train_job.control_replay_job(
        seed=42,
        base_model=str(tmp_path / "base"),
        tasks_path=str(tasks_file),
        controls_path=None,
        out=str(out),
        training=training,
        agent=CONFIG["agent"],
        reward=CONFIG["reward"],
        grading=CONFIG["grading"],
        sandbox=CONFIG["sandbox"],
        gpus=0,
        threads=1,
        config={"test": True},
    )
    assert [t.instance_id for t in pools[0]] == ["toy__calc__add_1", "toy__calc__add_2"]
    assert receipt["quarantined"] == training["quarantine"]
    written = json.loads(out.with_suffix(".json").read_text())
    assert written["quarantined"] == {"toy__calc__add_0": "its image lost a dependency"}
