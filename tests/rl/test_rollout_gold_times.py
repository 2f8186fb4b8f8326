"""The training jobs grade with the control rule's recorded gold times: the rollout workers
(in-process, processes or Ray actors) get the pool's times as plain data and build their
sandbox's book from them, so no worker spends a gold run on a task the control rule timed."""

from __future__ import annotations

import pickle

import pytest
from jobfactory import run_control_replay, run_segment
from policyfactory import toy_tasks
from taskfactory import CONFIG, write_control_records

from editcredit.data.freeze import write_parquet
from editcredit.io.provenance import read_provenance
from editcredit.rl import train_job
from editcredit.rl.cursor import pool_of_size

TIMINGS = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 2.0}}


class Captured(RuntimeError):
    """Raised by the planted ``make_workers`` once it has the workers' settings."""


@pytest.fixture
def suite(tmp_path):
    """Four toy train tasks; the control rule's records: times for three, none for the last
    (its gold run did not finish)."""
    tasks = toy_tasks(4)
    tasks_file = tmp_path / "tasks.parquet"
    write_parquet(tasks, tasks_file)
    times = {t.instance_id: TIMINGS for t in tasks[:3]} | {tasks[3].instance_id: None}
    records = write_control_records(tmp_path / "controls" / "tasks", times)
    return tasks_file, records, [t.instance_id for t in tasks]


def pool_times(ids: list[str], size: int) -> dict:
    pool = pool_of_size(ids, size)
    return {i: TIMINGS for i in sorted(pool) if i != ids[3]}


@pytest.mark.parametrize("pool_size", [0, 2])
def test_the_control_replays_workers_get_the_pools_recorded_times(
    suite, tmp_path, monkeypatch, pool_size
):
    tasks_file, records, ids = suite
    seen = []

    class Workers:
        def close(self):
            pass

        def describe(self):
            return {"kind": "fake"}

    def make_workers(ray_cfg, worker_kwargs):
        seen.append(pickle.loads(pickle.dumps(worker_kwargs)))  # plain data: a process, an actor
        return Workers()

    monkeypatch.setattr(train_job, "make_workers", make_workers)
    monkeypatch.setattr(train_job, "replay_control", lambda *a, **kw: [])
    out = tmp_path / "control" / "s42.parquet"
    (tmp_path / "base").mkdir()  # a provenance input only: replay_control is faked
    overrides = {"training.pool_size": pool_size, "training.grpo.tasks_per_step": 2}
    run_control_replay(42, tmp_path / "base", out, tasks_file, overrides, gold_times=records)
    assert seen[0]["gold_times"] == pool_times(ids, pool_size)
    assert records not in read_provenance(out.with_suffix(".json"))["inputs"]  # clock-dependent


def test_a_segments_workers_get_the_recorded_times(suite, tmp_path, monkeypatch):
    tasks_file, records, ids = suite

    def make_workers(ray_cfg, worker_kwargs):
        raise Captured(worker_kwargs)

    monkeypatch.setattr(train_job, "make_workers", make_workers)
    monkeypatch.setattr(
        train_job, "check_storage", lambda *a: {"free_bytes": 1, "expected_checkpoint_bytes": 1}
    )
    (tmp_path / "base").mkdir()  # the start model: never read, the workers are planted
    with pytest.raises(Captured) as got:
        first = int(CONFIG["training"]["segment_steps"])  # the first segment: from the base
        run_segment(
            "M-s42", first, tmp_path / "base", tmp_path / "seg", tasks_file, gold_times=records
        )
    assert got.value.args[0]["gold_times"] == pool_times(ids, 0)


def test_without_a_directory_the_workers_get_no_times_and_a_missing_one_is_named(
    suite, tmp_path, monkeypatch
):
    tasks_file, _, _ = suite

    def make_workers(ray_cfg, worker_kwargs):
        raise Captured(worker_kwargs)

    monkeypatch.setattr(train_job, "make_workers", make_workers)
    (tmp_path / "base").mkdir()
    out = tmp_path / "s42.parquet"
    with pytest.raises(Captured) as got:  # every task measured by the workers' sandboxes
        run_control_replay(42, tmp_path / "base", out, tasks_file, gold_times=None)
    assert got.value.args[0]["gold_times"] == {}
    missing = str(tmp_path / "missing")
    with pytest.raises(ValueError, match=f"{missing}: no control rule's per-task directory"):
        run_control_replay(42, tmp_path / "base", out, tasks_file, gold_times=missing)


def _random_policy(out):
    from editcredit.io.identity import write_identity
    from editcredit.policy.chat import ChatTemplate
    from editcredit.policy.model import new_model, tiny_config
    from editcredit.policy.tokenizer import train_tokenizer

    tok = train_tokenizer(
        ["edit calc.py\n- return a - b\n+ return a + b", "run", "submit"] * 20, 300
    )
    chat = ChatTemplate(tok)
    arch = dict(
        hidden_size=16,
        intermediate_size=32,
        num_layers=1,
        num_heads=2,
        num_kv_heads=1,
        max_positions=256,
    )
    model = new_model(tiny_config(len(tok), arch, chat.pad, chat.bos, chat.end_of_turn), seed=0)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    write_identity(out, config={"test": "random policy"})
    return out


def test_a_rollout_worker_builds_its_sandboxs_book_from_the_plain_times(tmp_path):
    from editcredit.rl.rollout_worker import RolloutWorker
    from editcredit.sandbox.limits import GoldTimes

    model = _random_policy(tmp_path / "model")
    sandbox = {**CONFIG["sandbox"], "backend": "local"}
    worker = RolloutWorker(
        str(model),
        CONFIG["agent"],
        CONFIG["reward"],
        CONFIG["grading"],
        sandbox,
        gold_times={"a": TIMINGS},
    )
    try:
        book = worker.sandbox.gold_times
        assert book.get("a") == GoldTimes.from_timings(TIMINGS)
        assert not book.known("b")  # measured by the sandbox when it is graded
    finally:
        worker.close()
