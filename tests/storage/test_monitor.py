"""The storage monitor: a pure decision on free bytes and inodes, a receipt per stop (never one
overwritten), read through a patched statvfs."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from editcredit.storage import monitor as mon
from editcredit.storage.monitor import DiskState, Floor, StorageLow, StorageMonitor, shortfall

FLOOR = Floor(min_free_bytes=1000, min_free_inodes=50)


@pytest.mark.parametrize(
    "state, need, reasons",
    [
        (DiskState(2000, 100, 1000), 0, []),
        (DiskState(1000, 50, 1000), 0, []),  # exactly at the floor
        (DiskState(999, 100, 1000), 0, ["min_free_disk_gb"]),
        (DiskState(2000, 100, 1000), 1001, ["min_free_disk_gb"]),  # what is about to be written
        (DiskState(2000, 100, 1000), 1000, []),
        (DiskState(2000, 49, 1000), 0, ["min_free_inodes"]),
        (DiskState(10, 0, 1000), 0, ["min_free_disk_gb", "min_free_inodes"]),
        (DiskState(2000, 0, 0), 0, []),  # a file system that counts no inodes
    ],
)
def test_shortfall(state, need, reasons):
    got = shortfall(state, FLOOR, need)
    assert [r.rsplit(".", 1)[-1].rstrip(")") for r in got] == reasons


def test_floor_of_the_health_config():
    floor = Floor.from_health({"min_free_disk_gb": 1.5, "min_free_inodes": 7})
    assert floor == Floor(1_500_000_000, 7)


def fake_statvfs(free_bytes: int, free_inodes: int, total_inodes: int = 10**6):
    def statvfs(path):
        assert os.path.exists(path)
        return SimpleNamespace(
            f_bavail=free_bytes // 4096,
            f_frsize=4096,
            f_favail=free_inodes,
            f_files=total_inodes,
        )

    return statvfs


def test_a_stop_writes_a_new_receipt_each_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monitor = StorageMonitor(tmp_path, FLOOR, "eval_model/base/holdout")
    monkeypatch.setattr(mon, "statvfs", fake_statvfs(4096 * 10, 100))
    assert monitor.check("before round 1") == DiskState(40960, 100, 10**6)
    monkeypatch.setattr(mon, "statvfs", fake_statvfs(4096 * 10, 3))
    receipts = []
    for where in ("before round 1", "before round 1 batch 2"):
        with pytest.raises(StorageLow, match="3 inodes free") as err:
            monitor.check(where)
        receipts.append(err.value.receipt)
    assert [p.as_posix() for p in receipts] == [
        "logs/storage/eval_model/base/holdout/1.json",
        "logs/storage/eval_model/base/holdout/2.json",
    ]
    first, second = (json.loads(p.read_text()) for p in receipts)
    assert first["where"] == "before round 1" and second["where"] == "before round 1 batch 2"
    assert first["state"] == {"free_bytes": 40960, "free_inodes": 3, "total_inodes": 10**6}
    assert first["floor"] == {"min_free_bytes": 1000, "min_free_inodes": 50}
    assert sorted(os.listdir(tmp_path / "logs/storage/eval_model/base/holdout")) == [
        "1.json",
        "2.json",
    ]  # no temporary file left behind


def test_the_real_probe_reads_this_file_system(tmp_path):
    state = mon.probe(tmp_path)
    assert state.free_bytes > 0 and state.total_inodes >= state.free_inodes >= 0
