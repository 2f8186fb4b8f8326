"""Bind a job to the GPUs it was given.

Snakemake's local scheduler counts the ``gpu`` resource but assigns no device, so a job claims
free devices from a lock-based pool (one ``fcntl`` lock file per device, held for the life of the
process). On a cluster the scheduler's ``CUDA_VISIBLE_DEVICES`` is respected as is.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import torch

LOCK_DIR = Path(os.environ.get("EDITCREDIT_GPU_LOCKS", "/tmp/editcredit-gpu-locks"))
_held: list[int] = []  # file descriptors kept open: the locks last as long as the process


def bind_gpus(n: int) -> torch.device:
    """Claim ``n`` GPUs (0 = CPU) and return the device to use; fail clearly if none is free."""
    if n <= 0 or not torch.cuda.is_available():
        return torch.device("cpu")
    if os.environ.get("SLURM_JOB_ID") and os.environ.get("CUDA_VISIBLE_DEVICES"):
        return torch.device("cuda")
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    candidates = (
        visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    )
    claimed = []
    for dev in candidates:
        fd = os.open(LOCK_DIR / f"gpu{dev}.lock", os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held.append(fd)
        claimed.append(dev)
        if len(claimed) == n:
            break
    if len(claimed) < n:
        raise RuntimeError(f"asked for {n} GPU(s) but only {len(claimed)} of {candidates} are free")
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(claimed)
    torch.cuda.set_device(0)
    return torch.device("cuda")
