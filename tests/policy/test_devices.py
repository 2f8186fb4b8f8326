"""The GPU lock pool: distinct devices per job, K slots per device when shared."""

from __future__ import annotations

import os

import pytest

from editcredit.policy import devices


@pytest.fixture
def release():
    before = len(devices._held)
    yield
    while len(devices._held) > before:
        os.close(devices._held.pop())


def test_one_slot_per_device_by_default(tmp_path, release):
    assert devices.claim_devices(["0", "1"], 1, 1, tmp_path) == ["0"]
    assert devices.claim_devices(["0", "1"], 1, 1, tmp_path) == ["1"]
    with pytest.raises(RuntimeError, match=r"only 0 of \['0', '1'\] have a free slot"):
        devices.claim_devices(["0", "1"], 1, 1, tmp_path)


def test_shared_device_gives_k_jobs_a_slot_each(tmp_path, release):
    for _ in range(3):
        assert devices.claim_devices(["0"], 1, 3, tmp_path) == ["0"]
    with pytest.raises(RuntimeError, match="3 job"):
        devices.claim_devices(["0"], 1, 3, tmp_path)


def test_a_multi_gpu_job_takes_distinct_devices(tmp_path, release):
    assert devices.claim_devices(["0", "1", "2"], 2, 2, tmp_path) == ["0", "1"]
    assert devices.claim_devices(["0", "1", "2"], 2, 2, tmp_path) == ["0", "1"]
    with pytest.raises(RuntimeError, match=r"only 1 of"):
        devices.claim_devices(["0", "1", "2"], 2, 2, tmp_path)
    # the failed claim released what it had taken: device 2 still has both slots
    assert devices.claim_devices(["2"], 1, 2, tmp_path) == ["2"]
    assert devices.claim_devices(["2"], 1, 2, tmp_path) == ["2"]


@pytest.mark.parametrize(("raw", "ok"), [("1", 1), ("4", 4), ("0", None), ("x", None)])
def test_jobs_per_gpu_from_the_environment(monkeypatch, raw, ok):
    monkeypatch.setenv("EDITCREDIT_JOBS_PER_GPU", raw)
    if ok is None:
        with pytest.raises(ValueError, match="EDITCREDIT_JOBS_PER_GPU"):
            devices.jobs_per_gpu()
    else:
        assert devices.jobs_per_gpu() == ok
