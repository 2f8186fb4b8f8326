"""Bind a job to the GPUs it was given.

Snakemake's local scheduler counts the ``gpu`` resource but assigns no device, so a job claims
free devices from a lock-based pool (one ``fcntl`` lock file per device slot, held for the life
of the process). On a cluster the scheduler's ``CUDA_VISIBLE_DEVICES`` is respected as is.

A device that runs compute processes of anyone else (processes that are not, and do not descend
from, a job holding one of the pool's locks: ``editcredit.policy.gpu_processes``) is skipped;
a job that cannot get its devices names those processes in its error.

Small models leave most of a large GPU idle. ``EDITCREDIT_JOBS_PER_GPU=K`` (a property of the
machine, not of the study: results do not depend on it) gives every device K slots, so K jobs
share it; raise Snakemake's limit to match (``--resources gpu=<devices x K>``).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import torch

from editcredit.policy.gpu_processes import foreign_processes, gpu_processes, own_pids

LOCK_DIR = Path(os.environ.get("EDITCREDIT_GPU_LOCKS", "/tmp/editcredit-gpu-locks"))
_held: list[int] = []  # file descriptors kept open: the locks last as long as the process


def jobs_per_gpu() -> int:
    """Slots per device from ``EDITCREDIT_JOBS_PER_GPU`` (default 1)."""
    raw = os.environ.get("EDITCREDIT_JOBS_PER_GPU", "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"EDITCREDIT_JOBS_PER_GPU must be a positive integer, not {raw!r}")
    return value


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)  # the holder's pid: its processes on the GPU are the workflow's
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def claim_devices(
    candidates: list[str],
    n: int,
    slots: int,
    lock_dir: Path,
    foreign: dict[str, list[int]] | None = None,
) -> list[str]:
    """Claim one free slot on each of ``n`` distinct devices, skipping those that ``foreign``
    lists (device -> pids of processes outside the workflow); the locks stay held."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    foreign = foreign or {}
    claimed: list[str] = []
    fds: list[int] = []
    for dev in candidates:
        if foreign.get(dev):
            continue
        for slot in range(slots):
            name = f"gpu{dev}.lock" if slot == 0 else f"gpu{dev}.slot{slot}.lock"
            fd = _try_lock(lock_dir / name)
            if fd is not None:
                fds.append(fd)
                claimed.append(dev)
                break
        if len(claimed) == n:
            _held.extend(fds)
            return claimed
    for fd in fds:  # a job that cannot get all it asked for holds nothing
        os.close(fd)
    busy = "".join(
        f"; GPU {dev} runs processes outside the workflow (pids {', '.join(map(str, pids))})"
        for dev, pids in foreign.items()
        if pids and dev in candidates
    )
    raise RuntimeError(
        f"asked for {n} GPU(s) but only {len(claimed)} of {candidates} have a free slot "
        f"({slots} job(s) per GPU; locks in {lock_dir}){busy}"
    )


def bind_gpus(n: int) -> torch.device:
    """Claim ``n`` GPUs (0 = CPU) and return the device to use; fail clearly if none is free."""
    if n <= 0 or not torch.cuda.is_available():
        return torch.device("cpu")
    if os.environ.get("SLURM_JOB_ID") and os.environ.get("CUDA_VISIBLE_DEVICES"):
        return torch.device("cuda")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    candidates = (
        visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    )
    foreign = foreign_processes(candidates, gpu_processes(), own_pids(LOCK_DIR))
    claimed = claim_devices(candidates, n, jobs_per_gpu(), LOCK_DIR, foreign)
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(claimed)
    torch.cuda.set_device(0)
    return torch.device("cuda")
