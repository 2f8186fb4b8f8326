"""The training pool screened by the base policy (rule training_pool, ``rl.pool``): of the first
candidates in SHA256 order, the first ``pool_size`` the base solved in some but not all of its
episodes; recorded with the counts, the screen's rollouts and the base that played them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from jobfactory import job_settings
from policyfactory import toy_tasks
from record_shapes import assert_record

from editcredit.data.freeze import write_parquet
from editcredit.job_settings import PoolJobSettings
from editcredit.rl import pool_job
from editcredit.rl.cursor import pool_of_size
from editcredit.rl.pool import (
    learnable,
    read_pool,
    screen_candidates,
    screen_counts,
    screened_pool,
)
from editcredit.rl.pool_job import PoolJob, PoolRecord, training_pool_job
from editcredit.rl.train_job import pool_tasks


@pytest.mark.parametrize(
    "episodes, solved, want",
    [
        (4, 0, False),  # never solved: every reward of a group equal
        (4, 4, False),  # always solved
        (4, 1, True),
        (4, 3, True),
        (2, 1, True),
        (1, 0, False),  # one episode cannot tell
        (1, 1, False),
        (0, 0, False),  # every episode masked
    ],
)
def test_a_task_is_learnable_when_solved_in_some_but_not_all(episodes, solved, want):
    assert learnable({"episodes": episodes, "solved": solved}) is want


def counts(*solved, episodes=4):
    return {f"t{i}": {"episodes": episodes, "solved": s} for i, s in enumerate(solved)}


@pytest.mark.parametrize(
    "solved, size, want",
    [
        ((0, 2, 4, 1, 3), 2, ["t1", "t3"]),  # the first learnable, in candidate order
        ((0, 2, 4, 1, 3), 3, ["t1", "t3", "t4"]),
        ((1, 1, 1), 1, ["t0"]),
        ((2, 0, 0, 0), 1, ["t0"]),
    ],
)
def test_the_pool_is_the_first_learnable_candidates(solved, size, want):
    table = counts(*solved)
    assert screened_pool(list(table), table, size) == want


def test_too_few_learnable_candidates_is_an_error_naming_the_keys():
    table = counts(0, 2, 4, 4)
    with pytest.raises(ValueError, match=r"1 of 4 candidates .* training.pool_size \(2\)"):
        screened_pool(list(table), table, 2)


def test_a_candidate_without_episodes_is_not_kept():
    table = counts(2, 2)
    assert screened_pool(["t0", "missing", "t1"], table, 2) == ["t0", "t1"]


def test_masked_episodes_are_not_counted():
    rows = [
        {"instance_id": "a", "masked": False, "Y": 1},
        {"instance_id": "a", "masked": True, "Y": 0},
        {"instance_id": "a", "masked": False, "Y": 0},
        {"instance_id": "b", "masked": True, "Y": 0},
    ]
    assert screen_counts(rows) == {
        "a": {"episodes": 2, "solved": 1},
        "b": {"episodes": 0, "solved": 0},
    }


def test_the_candidates_are_the_first_in_hash_order():
    ids = [t.instance_id for t in toy_tasks(6)]
    assert screen_candidates(ids, 4) == pool_of_size(ids, 4)
    assert screen_candidates(list(reversed(ids)), 4) == pool_of_size(ids, 4)


def write_pool(path: Path, pool: list[str], size: int) -> Path:
    path.write_text(json.dumps({"pool": pool, "pool_size": size}))
    return path


def test_read_pool_takes_the_files_tasks(tmp_path):
    tasks = toy_tasks(4)
    ids = [tasks[3].instance_id, tasks[1].instance_id]
    got = read_pool(write_pool(tmp_path / "pool.json", ids, 2), tasks, 2)
    assert [t.instance_id for t in got] == ids
    assert [t.instance_id for t in pool_tasks(tasks, 2, str(tmp_path / "pool.json"))] == ids


def test_a_pool_of_another_size_is_refused_naming_the_file(tmp_path):
    path = write_pool(tmp_path / "pool.json", [toy_tasks(1)[0].instance_id], 1)
    with pytest.raises(ValueError, match=r"pool\.json: made for training.pool_size 1"):
        read_pool(path, toy_tasks(2), 2)


def test_a_pool_naming_a_task_no_longer_eligible_is_refused(tmp_path):
    tasks = toy_tasks(3)
    path = write_pool(tmp_path / "pool.json", [tasks[0].instance_id, "gone__x"], 2)
    with pytest.raises(ValueError, match=r"not among the eligible train tasks: \['gone__x'\]"):
        read_pool(path, tasks, 2)


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(5), path)
    return path


def job_files(tmp_path, suite, base="base"):
    return PoolJob(
        base_model=str(tmp_path / base),
        tasks=str(suite),
        controls=None,
        out=str(tmp_path / "training" / "pool.json"),
        screen=str(tmp_path / "training" / "pool_screen.parquet"),
    )


def test_without_a_screen_the_pool_is_the_first_tasks_and_no_base_is_read(tmp_path, suite):
    settings = job_settings(
        PoolJobSettings,
        {
            "training.pool_size": 2,
            "training.pool_screen.samples": 0,
            "training.grpo.tasks_per_step": 2,
        },
    )
    job = job_files(tmp_path, suite, base="absent")
    record = training_pool_job(job, settings, gpus=0, threads=1, config={"test": True})
    ids = [t.instance_id for t in toy_tasks(5)]
    assert record["pool"] == pool_of_size(ids, 2)
    assert_record(record, PoolRecord)
    assert "screen" not in record and "candidates" not in record
    assert json.loads(Path(job.out).read_text())["pool"] == pool_of_size(ids, 2)
    assert pd.read_parquet(job.screen).empty


SCREEN = {
    "training.pool_size": 2,
    "training.pool_screen.candidates": 4,
    "training.pool_screen.samples": 3,
    "training.grpo.tasks_per_step": 2,
}


def fake_screen(solved_by_rank):
    """A screen whose k-th candidate (in candidate order) is solved ``solved_by_rank[k]`` of
    its episodes."""

    def play(job, settings, candidates, gpus, threads):
        n = settings.pool_screen.samples
        return [
            {"instance_id": t.instance_id, "masked": False, "Y": int(i < solved_by_rank[k])}
            for k, t in enumerate(candidates)
            for i in range(n)
        ]

    return play


def test_the_screened_pool_and_its_counts_are_recorded(tmp_path, suite, monkeypatch):
    monkeypatch.setattr(pool_job, "play_screen", fake_screen([3, 1, 0, 2]))
    monkeypatch.setattr(pool_job, "write_trajectories", lambda rows, path: None)
    (tmp_path / "base").mkdir()
    job = job_files(tmp_path, suite)
    record = training_pool_job(
        job, job_settings(PoolJobSettings, SCREEN), gpus=0, threads=1, config={"test": True}
    )
    cands = pool_of_size([t.instance_id for t in toy_tasks(5)], 4)
    assert_record(record, PoolRecord)
    written = json.loads(Path(job.out).read_text())
    written.pop("provenance")  # write_result_json's block beside the record
    assert_record(written, PoolRecord, ordered=False)
    assert record["pool"] == [cands[1], cands[3]]
    assert [c["solved"] for c in record["candidates"]] == [3, 1, 0, 2]
    assert record["screen"] == {"candidates": 4, "samples": 3, "seed": 4242}
    assert json.loads(Path(job.out).read_text())["pool"] == record["pool"]


def test_a_screen_that_keeps_too_few_writes_no_pool(tmp_path, suite, monkeypatch):
    monkeypatch.setattr(pool_job, "play_screen", fake_screen([3, 0, 0, 2]))
    monkeypatch.setattr(pool_job, "write_trajectories", lambda rows, path: None)
    (tmp_path / "base").mkdir()
    job = job_files(tmp_path, suite)
    settings = job_settings(PoolJobSettings, {**SCREEN, "training.pool_size": 3})
    with pytest.raises(ValueError, match=r"1 of 4 candidates"):
        training_pool_job(job, settings, gpus=0, threads=1, config={"test": True})
    assert not Path(job.out).exists()


def test_a_real_screen_in_the_docker_sandbox(tmp_path, half_policy):
    """The half policy (it fixes the toy bug about half of the time) plays the screen: the
    recorded counts are a recount of the kept rollouts, and the pool their first learnable."""
    suite = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(3), suite)
    job = PoolJob(
        base_model=str(half_policy),
        tasks=str(suite),
        controls=None,
        out=str(tmp_path / "pool.json"),
        screen=str(tmp_path / "pool_screen.parquet"),
    )
    overrides = {
        **SCREEN,
        "training.pool_size": 1,
        "training.grpo.tasks_per_step": 1,
        "training.pool_screen.candidates": 3,
        "training.pool_screen.samples": 4,
        "agent.max_turns": 4,
        "agent.max_new_tokens": 24,
    }
    settings = job_settings(PoolJobSettings, overrides)
    record = training_pool_job(job, settings, gpus=0, threads=1, config={"test": True})
    rows = pd.read_parquet(job.screen)
    assert len(rows) == 3 * 4
    recount = screen_counts(rows.to_dict("records"))
    assert {
        c["instance_id"]: {k: c[k] for k in ("episodes", "solved")} for c in record["candidates"]
    } == recount
    cands = [c["instance_id"] for c in record["candidates"]]
    assert record["pool"] == screened_pool(cands, recount, 1)
    assert {r.split(":")[0] for r in rows["rollout_key"]} == {"pool-screen"}


@pytest.mark.parametrize("size", [0, 3])
def test_a_pool_that_holds_every_eligible_task_is_not_screened(tmp_path, size):
    """pool_size 0 (every eligible task), or a suite no larger than the pool: the pool is all
    of them and no episode is played (the base directory does not even exist)."""
    suite = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(3), suite)
    job = job_files(tmp_path, suite, base="absent")
    settings = job_settings(PoolJobSettings, {**SCREEN, "training.pool_size": size})
    record = training_pool_job(job, settings, gpus=0, threads=1, config={"test": True})
    assert record["pool"] == pool_of_size([t.instance_id for t in toy_tasks(3)], 0)
    assert_record(record, PoolRecord)
    assert "candidates" not in record and record["screen_skipped"]
