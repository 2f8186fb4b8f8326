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


CARDS = {"0": 81559, "1": 81559, "2": 81559, "3": 143771}
FREE = 81559 - devices.RESERVE_MB  # what claims may take of an 80 GB card


def test_a_whole_card_claim_takes_one_device_each(tmp_path, release):
    assert devices.claim_devices(["0", "1"], 1, FREE, CARDS, tmp_path) == ["0"]
    assert devices.claim_devices(["0", "1"], 1, FREE, CARDS, tmp_path) == ["1"]
    with pytest.raises(RuntimeError, match=r"only 0 of \['0', '1'\] have room"):
        devices.claim_devices(["0", "1"], 1, FREE, CARDS, tmp_path)


@pytest.mark.parametrize(("mb", "fit"), [(4096, 19), (7424, 10), (20000, 4), (FREE, 1)])
def test_jobs_share_a_card_by_their_declared_memory(tmp_path, release, mb, fit):
    for _ in range(fit):
        assert devices.claim_devices(["0"], 1, mb, CARDS, tmp_path) == ["0"]
    with pytest.raises(RuntimeError, match=rf"asked for {mb} MiB .*GPU 0: \d+ of 81559 MiB free"):
        devices.claim_devices(["0"], 1, mb, CARDS, tmp_path)
    used = sum(c.mb for c in devices.live_claims(tmp_path, "0"))
    assert used == fit * mb <= FREE


def test_a_gone_holders_claim_is_free_again(tmp_path, release):
    devices.claim_devices(["0"], 1, FREE, CARDS, tmp_path)
    os.close(devices._held.pop())  # the holder ends
    assert devices.live_claims(tmp_path, "0") == []
    assert not list(tmp_path.glob("gpu0.*MiB.*.lock"))  # its file went with it
    assert devices.claim_devices(["0"], 1, FREE, CARDS, tmp_path) == ["0"]


def test_a_multi_gpu_job_takes_distinct_devices(tmp_path, release):
    half = FREE // 2
    assert devices.claim_devices(["0", "1", "2"], 2, half, CARDS, tmp_path) == ["0", "1"]
    assert devices.claim_devices(["0", "1", "2"], 2, half, CARDS, tmp_path) == ["0", "1"]
    with pytest.raises(RuntimeError, match=r"only 1 of"):
        devices.claim_devices(["0", "1", "2"], 2, half, CARDS, tmp_path)
    # the failed claim released what it had taken: device 2 still has both halves
    assert devices.claim_devices(["2"], 1, half, CARDS, tmp_path) == ["2"]
    assert devices.claim_devices(["2"], 1, half, CARDS, tmp_path) == ["2"]


@pytest.mark.parametrize(
    ("declared", "gpus", "k", "share"),
    [(4096, 1, "1", 4096), (8192, 2, "1", 4096), (8191, 2, "1", 4096), (0, 1, "1", FREE),
     (0, 1, "4", FREE // 4), (0, 2, "8", FREE // 8)],
)  # fmt: skip
def test_a_jobs_share_of_each_device(monkeypatch, declared, gpus, k, share):
    monkeypatch.setenv("EDITCREDIT_JOBS_PER_GPU", k)
    assert devices.job_share_mb(declared, gpus, 81559) == share


def test_card_memory_from_nvidia_smi():
    got = devices.parse_card_memory("0, GPU-aaa, 81559 MiB\n1, GPU-bbb, 143771 MiB\n")
    assert got == {"0": 81559, "GPU-aaa": 81559, "1": 143771, "GPU-bbb": 143771}


@pytest.mark.parametrize(("raw", "ok"), [("", 0), ("0", 0), ("4096", 4096), ("4.5", None)])
def test_declared_memory_from_the_environment(monkeypatch, raw, ok):
    monkeypatch.setenv("EDITCREDIT_GPU_MEM_MB", raw)
    if ok is None:
        with pytest.raises(ValueError, match="EDITCREDIT_GPU_MEM_MB"):
            devices.declared_gpu_mem_mb()
    else:
        assert devices.declared_gpu_mem_mb() == ok


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
    assert devices.claim_devices(["0", "1"], 1, FREE, CARDS, tmp_path, foreign) == ["1"]
    with pytest.raises(
        RuntimeError, match=r"GPU 0 runs processes outside the workflow \(pids 4242\)"
    ):
        devices.claim_devices(["0", "1"], 1, FREE, CARDS, tmp_path, foreign)
    assert not list(tmp_path.glob("gpu0.*.lock"))  # never claimed


def test_a_lock_records_its_holder_for_the_next_job(tmp_path, release):
    from editcredit.policy.gpu_processes import lock_holders, own_pids

    devices.claim_devices(["3"], 1, 4096, CARDS, tmp_path)
    devices.claim_devices(["3"], 1, 4096, CARDS, tmp_path)
    claims = sorted(tmp_path.glob("gpu3.4096MiB.*.lock"))
    assert len(claims) == 2
    assert {p.read_text() for p in claims} == {f"{os.getpid()}\n"}
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
    fractions = _mock_allocator(monkeypatch)
    assert devices.bind_gpus(1, declared_mb=0).type == "cuda"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert fractions == {
        0: pytest.approx((FREE - 1024) * 2**20 / (81559 * 2**20)),
        "settings": "expandable_segments:True",
    }
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    with pytest.raises(
        RuntimeError, match=r"GPU 0 runs .* outside the workflow \(pids 501, 4242\)"
    ):
        devices.bind_gpus(1, declared_mb=0)


def _mock_allocator(monkeypatch) -> dict[int, float]:
    """Two 80 GB cards; the allocator caps set, by device."""
    fractions: dict[int, float] = {}

    class Props:
        total_memory = 81559 * 2**20

    monkeypatch.setattr(devices, "card_memory", lambda: {"0": 81559, "1": 81559})
    monkeypatch.setattr(devices.torch.cuda, "get_device_properties", lambda i: Props())
    monkeypatch.setattr(
        devices.torch.cuda,
        "set_per_process_memory_fraction",
        lambda f, i: fractions.__setitem__(i, f),
    )
    monkeypatch.setattr(
        devices.torch.cuda.memory,
        "_set_allocator_settings",
        lambda conf: fractions.__setitem__("settings", conf),
    )
    return fractions


def test_bind_gpus_claims_and_caps_the_declared_memory(tmp_path, monkeypatch, release):
    """Jobs declaring 30,000 MiB: two share a card, the next two the other card, a fifth finds
    no room; each caps its allocator at its declaration less the process's overhead."""
    from editcredit.policy.gpu_memory import PROCESS_OVERHEAD_MB

    monkeypatch.setattr(devices.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(devices.torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(devices.torch.cuda, "set_device", lambda i: None)
    monkeypatch.setattr(devices, "gpu_processes", lambda: None)
    monkeypatch.setattr(devices, "LOCK_DIR", tmp_path)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("EDITCREDIT_GPU_MEM_MB", "30000")
    fractions = _mock_allocator(monkeypatch)
    got = []
    for _ in range(4):
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        devices.bind_gpus(1)
        got.append(os.environ["CUDA_VISIBLE_DEVICES"])
    assert got == ["0", "0", "1", "1"]
    budget = (30000 - PROCESS_OVERHEAD_MB) * 2**20
    assert devices.memory_budget_bytes() == budget
    assert fractions[0] == pytest.approx(budget / (81559 * 2**20))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    with pytest.raises(RuntimeError, match=r"asked for 30000 MiB on each of 1 GPU"):
        devices.bind_gpus(1, wait_s=0)


@pytest.mark.parametrize(
    ("conf", "settings"),
    [
        (None, "expandable_segments:True"),  # the capped allocator grows segments in place
        ("max_split_size_mb:128", "expandable_segments:True"),
        ("expandable_segments:False", None),  # the user's choice stands
    ],
)
def test_a_capped_allocator_grows_its_segments_in_place(monkeypatch, conf, settings):
    """Under a cap, fixed-size segments fragment (an H100 study's evaluations failed with
    hundreds of MiB reserved but free in pieces): a job that caps its allocator asks for
    expandable segments unless PYTORCH_CUDA_ALLOC_CONF names them; none without a cap."""
    fractions = _mock_allocator(monkeypatch)
    monkeypatch.setitem(devices._budget, "bytes", None)  # restored after the test
    if conf is None:
        monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    else:
        monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", conf)
    devices._cap_allocators(0, 1)
    assert "settings" not in fractions
    devices._cap_allocators(4352, 1)
    assert fractions.get("settings") == settings
    assert 0 in fractions


@pytest.mark.parametrize(
    ("visible", "line"),
    [
        (None, "gpu=64 gpu_mem_mb=224306"),
        ("1", "gpu=32 gpu_mem_mb=143259"),
        ("GPU-aaa", "gpu=32 gpu_mem_mb=81047"),
    ],
)
def test_the_gpu_box_resources_line(visible, line):
    """What `python -m editcredit.policy.gpu_box` prints for profiles/gpu: the visible cards'
    memory less the reserve, and 32 GPU jobs a card at most."""
    from editcredit.policy.gpu_box import resources_line

    cards = devices.parse_card_memory("0, GPU-aaa, 81559 MiB\n1, GPU-bbb, 143771 MiB\n")
    assert resources_line(cards, visible, 32) == line
    with pytest.raises(ValueError, match="no GPU"):
        resources_line(cards, "7", 32)


def _claim_and_hold(lock_dir, mb, start, done, results):
    start.wait()
    try:
        devices.claim_devices(["0"], 1, mb, CARDS, lock_dir)
        results.put("claimed")
    except RuntimeError:
        results.put("refused")
    done.wait()  # hold the claim until every process has tried


def test_processes_claiming_at_once_never_overcommit_a_card(tmp_path):
    """Five processes ask for 20,000 MiB of an 80 GB card at the same moment: four get it."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    start, done, results = ctx.Barrier(5), ctx.Barrier(6), ctx.Queue()
    procs = [
        ctx.Process(target=_claim_and_hold, args=(tmp_path, 20000, start, done, results))
        for _ in range(5)
    ]
    for p in procs:
        p.start()
    answers = sorted(results.get(timeout=120) for _ in procs)
    assert sum(c.mb for c in devices.live_claims(tmp_path, "0")) == 4 * 20000
    done.wait(timeout=60)
    for p in procs:
        p.join(timeout=60)
    assert answers == ["claimed"] * 4 + ["refused"]
    assert devices.live_claims(tmp_path, "0") == []  # the holders are gone, their claims too
