"""The training pool (config ``training.pool_size``): a fixed, result-blind subset of the eligible
train tasks, the same for every arm and seed, so that tasks recur within a run."""

from __future__ import annotations

import hashlib

import pytest

from editcredit.rl.cursor import DataCursor, pool_of_size

IDS = [f"suite__mod__fn_{i}" for i in range(10)]


def by_hash(ids):
    return sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())


@pytest.mark.parametrize("size", [0, 1, 3, 10, 11])
def test_the_pool_is_the_first_tasks_in_hash_order(size):
    """At most ``size`` tasks: a pool larger than the eligible tasks is all of them."""
    want = by_hash(IDS)[: size or None]
    assert pool_of_size(IDS, size) == want


def test_the_pool_does_not_depend_on_the_order_it_is_given_in():
    assert pool_of_size(IDS, 4) == pool_of_size(list(reversed(IDS)), 4)


def test_a_smaller_pool_is_a_prefix_of_a_larger_one():
    assert pool_of_size(IDS, 7)[:3] == pool_of_size(IDS, 3)


def test_a_negative_pool_size_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="training.pool_size: -1 is negative"):
        pool_of_size(IDS, -1)


def test_a_small_pool_makes_tasks_recur_every_epoch():
    pool, cursor, seen = pool_of_size(IDS, 4), DataCursor(seed=42), []
    for _ in range(4):
        ids, cursor = cursor.take(pool, 2)
        seen += ids
    assert sorted(seen) == sorted(pool * 2)


def test_the_control_replay_plays_the_pool_and_lists_it(tmp_path, monkeypatch):
    import json

    from jobfactory import run_control_replay
    from policyfactory import toy_tasks

    from editcredit.data.freeze import write_parquet
    from editcredit.rl import train_job

    tasks_file = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(4), tasks_file)

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
    out = tmp_path / "control" / "s42.parquet"
    (tmp_path / "base").mkdir()  # a provenance input only: replay_control is faked
    overrides = {"training.pool_size": 2, "training.grpo.tasks_per_step": 2}
    receipt = run_control_replay(42, tmp_path / "base", out, tasks_file, overrides)
    want = pool_of_size([t.instance_id for t in toy_tasks(4)], 2)
    assert sorted(t.instance_id for t in pools[0]) == sorted(want)
    assert receipt["pool"] == sorted(want)
    assert json.loads(out.with_suffix(".json").read_text())["pool"] == sorted(want)
    from record_shapes import assert_record

    from editcredit.rl.records import ControlReceipt

    assert_record(receipt, ControlReceipt)
    written = json.loads(out.with_suffix(".json").read_text())
    written.pop("provenance")  # write_result_json's block beside the record
    assert_record(written, ControlReceipt, ordered=False)
