"""The storage guard of training (METHOD §5): a segment stops cleanly, with a receipt, when its
declared checkpoint bytes would leave less free disk than the floor, or too few inodes are free,
before training and before each step; nothing of the segment is written."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from jobfactory import NO_RAY, run_segment
from policyfactory import tiny_qwen2, toy_tasks, train_toy_policy

from editcredit.rl.train_job import (
    check_storage,
    expected_checkpoint_bytes,
    segment_monitor,
)
from editcredit.storage import monitor as mon
from editcredit.storage.monitor import StorageLow


@pytest.fixture
def model_dir(tmp_path):
    model = tiny_qwen2(vocab_size=64)
    model.save_pretrained(str(tmp_path / "m"))
    return tmp_path / "m", sum(p.numel() for p in model.parameters())


def test_expected_bytes_are_weights_and_two_adam_moments(model_dir):
    path, n = model_dir
    assert expected_checkpoint_bytes(str(path)) == 12 * n


def test_low_disk_stops_with_a_receipt(model_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = str(tmp_path / "runs" / "M-s1" / "step_2")
    health = {"min_free_disk_gb": 0.0, "min_free_inodes": 0}
    ok = check_storage(segment_monitor(out, health, "M-s1", 2), str(model_dir[0]))
    assert ok["free_bytes"] > ok["expected_checkpoint_bytes"] > 0
    from record_shapes import assert_record

    from editcredit.rl.records import StorageCheck

    assert_record(ok, StorageCheck)
    health = {"min_free_disk_gb": 1e9, "min_free_inodes": 0}
    with pytest.raises(StorageLow, match="stopped before training"):
        check_storage(segment_monitor(out, health, "M-s1", 2), str(model_dir[0]))
    (receipt,) = (tmp_path / "logs/storage/train_segment/M-s1/step_2").glob("*.json")
    body = json.loads(receipt.read_text())
    assert body["floor"]["min_free_bytes"] == 1e18 and body["where"] == "before training"
    assert body["need_bytes"] == 12 * model_dir[1]


def _statvfs_running_out(after: int):
    """A statvfs with plenty free for ``after`` calls, then five free inodes."""
    calls = []

    def statvfs(path):
        calls.append(path)
        inodes = 10**6 if len(calls) <= after else 5
        return SimpleNamespace(f_bavail=10**7, f_frsize=4096, f_favail=inodes, f_files=10**7)

    return statvfs, calls


@pytest.mark.docker
@pytest.mark.slow
def test_a_real_segment_stops_before_the_step_that_finds_too_few_inodes(
    tmp_path, monkeypatch, docker_sandbox
):
    from editcredit.data.freeze import write_parquet

    base = train_toy_policy(tmp_path / "base" / "model", docker_sandbox, sft_steps=200)
    tasks = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(), tasks)
    monkeypatch.chdir(tmp_path)
    # checks: before training, before step 1 (plenty), before step 2 (five inodes)
    statvfs, calls = _statvfs_running_out(after=2)
    monkeypatch.setattr(mon, "statvfs", statvfs)
    overrides = {
        **NO_RAY,
        "training.segment_steps": 2,
        "training.grpo.tasks_per_step": 2,
        "training.grpo.group_size": 2,
        "training.grpo.micro_batch_size": 4,
        "training.health.min_free_inodes": 100,
        "agent.max_turns": 3,
        "agent.max_new_tokens": 24,
    }
    out = Path("runs/O-s42/step_2")
    with pytest.raises(StorageLow, match="before step 2: 5 inodes free") as err:
        run_segment("O-s42", 2, base, out, tasks, overrides)
    assert len(calls) == 3
    assert not out.exists() and not out.with_name(".step_2.tmp").exists()  # nothing written
    assert err.value.receipt == Path("logs/storage/train_segment/O-s42/step_2/1.json")
    receipt = json.loads(err.value.receipt.read_text())
    assert receipt["where"] == "before step 2" and receipt["state"]["free_inodes"] == 5
    assert receipt["need_bytes"] == expected_checkpoint_bytes(str(base))
