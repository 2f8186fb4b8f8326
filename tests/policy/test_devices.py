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


GPUS_CSV = "0, GPU-aaa\n1, GPU-bbb\n2, GPU-ccc\n"
APPS_CSV = "GPU-bbb, 4242\nGPU-bbb, 501\nGPU-ccc, 777\nGPU-zzz, 9\n"


def test_nvidia_smi_answers_give_pids_per_index_and_uuid():
    from editcredit.policy.gpu_processes import parse_gpu_processes

    got = parse_gpu_processes(GPUS_CSV, APPS_CSV)
    assert got["0"] == [] and got["GPU-aaa"] == []
    assert got["1"] == got["GPU-bbb"] == [501, 4242]
    assert got["2"] == [777]
    assert "GPU-zzz" not in got
    assert parse_gpu_processes("0, GPU-aaa\n", "") == {"0": [], "GPU-aaa": []}


def test_a_missing_nvidia_smi_means_no_process_list():
    from editcredit.policy.gpu_processes import gpu_processes

    def absent(*args, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    assert gpu_processes(absent) is None


# pid -> parent: 501 is a Ray worker of job 500 (a lock holder), 4242 and 777 are not ours
PARENTS = {501: 500, 500: 1, 4242: 1, 777: 776, 776: 1}


@pytest.mark.parametrize(
    ("ours", "foreign"),
    [
        ({500}, {"1": [4242], "2": [777]}),
        ({500, 776}, {"1": [4242]}),
        ({1}, {}),  # everything descends from init
        (set(), {"1": [501, 4242], "2": [777]}),
    ],
)
def test_foreign_processes_are_those_outside_the_lock_holders_trees(ours, foreign):
    from editcredit.policy.gpu_processes import foreign_processes, parse_gpu_processes

    processes = parse_gpu_processes(GPUS_CSV, APPS_CSV)
    got = foreign_processes(["0", "1", "2"], processes, ours, PARENTS.get)
    assert got == foreign
    assert foreign_processes(["0", "1"], None, ours, PARENTS.get) == {}


def test_the_pool_skips_a_device_with_foreign_processes(tmp_path, release):
    foreign = {"0": [4242]}
    assert devices.claim_devices(["0", "1"], 1, 1, tmp_path, foreign) == ["1"]
    with pytest.raises(
        RuntimeError, match=r"GPU 0 runs processes outside the workflow \(pids 4242\)"
    ):
        devices.claim_devices(["0", "1"], 1, 1, tmp_path, foreign)
    assert not (tmp_path / "gpu0.lock").exists()  # never locked


def test_a_lock_records_its_holder_for_the_next_job(tmp_path, release):
    from editcredit.policy.gpu_processes import lock_holders, own_pids

    devices.claim_devices(["3"], 1, 2, tmp_path)
    devices.claim_devices(["3"], 1, 2, tmp_path)
    assert (tmp_path / "gpu3.lock").read_text() == f"{os.getpid()}\n"
    assert lock_holders(tmp_path) == {os.getpid()}
    assert os.getpid() in own_pids(tmp_path / "empty")


def test_bind_gpus_passes_the_foreign_devices_to_the_pool(tmp_path, monkeypatch, release):
    """A mocked machine: two devices, two foreign processes on device 0; the job gets device 1,
    and the next one, with no device left, names the processes."""
    import subprocess

    from editcredit.policy import gpu_processes

    answers = {
        "--query-gpu=index,uuid": "0, GPU-aaa\n1, GPU-bbb\n",
        "--query-compute-apps=gpu_uuid,pid": "GPU-aaa, 4242\nGPU-aaa, 501\n",
    }

    def smi(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 0, answers[cmd[1]], "")

    monkeypatch.setattr(devices.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(devices.torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(devices.torch.cuda, "set_device", lambda i: None)
    monkeypatch.setattr(devices, "gpu_processes", lambda: gpu_processes.gpu_processes(smi))
    monkeypatch.setattr(devices, "LOCK_DIR", tmp_path)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("EDITCREDIT_JOBS_PER_GPU", "1")
    assert devices.bind_gpus(1).type == "cuda"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    with pytest.raises(
        RuntimeError, match=r"GPU 0 runs .* outside the workflow \(pids 501, 4242\)"
    ):
        devices.bind_gpus(1)
