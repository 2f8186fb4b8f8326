"""The storage guard (METHOD §5): a segment stops cleanly, with a receipt, when its declared
checkpoint bytes would leave less free disk than the floor."""

from __future__ import annotations

import json

import pytest
from policyfactory import tiny_qwen2

from editcredit.rl.train_job import StorageLow, check_storage, expected_checkpoint_bytes


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
    ok = check_storage(str(tmp_path / "runs" / "r" / "step_2"), str(model_dir[0]), 0.0, "M-s1")
    assert ok["free_bytes"] > ok["expected_checkpoint_bytes"] > 0
    with pytest.raises(StorageLow, match="stopped before training"):
        check_storage(str(tmp_path / "runs" / "r" / "step_2"), str(model_dir[0]), 1e9, "M-s1")
    (receipt,) = (tmp_path / "logs" / "storage").glob("M-s1-*.json")
    assert json.loads(receipt.read_text())["min_free_gb"] == 1e9
