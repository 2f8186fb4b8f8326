"""Bind a job to the GPUs it was given, within the GPU memory it declared.

Snakemake's local scheduler counts the ``gpu`` and ``gpu_mem_mb`` resources but assigns no
device, so a job claims its share of free devices from a lock-based ledger: one ``fcntl``-locked
file per claim, ``gpu<dev>.<MiB>MiB.<pid>.lock``, held for the life of the process (a claim
whose holder is gone is free again). A job claims on each of its devices the GPU memory it
declared (its rule's ``gpu_mem_mb``, split over its GPUs, from
``editcredit.policy.gpu_memory``), on devices whose live claims leave that much of the card
free; then it caps its allocator at that budget
(``torch.cuda.set_per_process_memory_fraction``), so a job that allocates past its declaration
fails with an out-of-memory error that names the defect, never another job's.
On a cluster the scheduler's ``CUDA_VISIBLE_DEVICES`` is respected as is.

Jobs share a card by memory: as many as their declarations fit. A job that declares none
claims a whole card, or ``1 / EDITCREDIT_JOBS_PER_GPU`` of it (a property of the machine, not
of the study: results do not depend on it; the earlier fixed-slot sharing).

A device that runs compute processes of anyone else (processes that are not, and do not descend
from, a job holding one of the ledger's locks: ``editcredit.policy.gpu_processes``) is skipped;
a job that cannot get its devices names those processes in its error.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from editcredit.policy.gpu_memory import MIB, PROCESS_OVERHEAD_MB, allocator_budget_bytes
from editcredit.policy.gpu_processes import (
    foreign_processes,
    gpu_processes,
    own_pids,
    process_memory_mb,
)

LOCK_DIR = Path(os.environ.get("EDITCREDIT_GPU_LOCKS", "/tmp/editcredit-gpu-locks"))
MEMORY_QUERY = ["nvidia-smi", "--query-gpu=index,uuid,memory.total", "--format=csv,noheader"]
RESERVE_MB = 512
"""Memory of a card no claim may take (the driver's own and rounding)."""
_CLAIM = re.compile(r"gpu(?P<dev>.+)\.(?P<mb>\d+)MiB\.(?P<pid>\d+)(?:\.\d+)?\.lock")
_held: list[int] = []  # file descriptors kept open: the claims last as long as the process
_budget: dict[str, int | None] = {"bytes": None}


def jobs_per_gpu() -> int:
    """Shares of a card for a job that declares no GPU memory, from
    ``EDITCREDIT_JOBS_PER_GPU`` (default 1: the whole card)."""
    raw = os.environ.get("EDITCREDIT_JOBS_PER_GPU", "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"EDITCREDIT_JOBS_PER_GPU must be a positive integer, not {raw!r}")
    return value


def declared_gpu_mem_mb() -> int:
    """The GPU memory this job declared (``EDITCREDIT_GPU_MEM_MB``, set from the rule's
    ``gpu_mem_mb`` by its script; 0 when none)."""
    raw = os.environ.get("EDITCREDIT_GPU_MEM_MB", "0") or "0"
    if not raw.isdigit():
        raise ValueError(f"EDITCREDIT_GPU_MEM_MB must be a whole number of MiB, not {raw!r}")
    return int(raw)


def declare_gpu_mem_mb(resources) -> None:
    """Record a Snakemake job's ``resources.gpu_mem_mb`` for :func:`bind_gpus` (a rule without
    it declares none)."""
    os.environ["EDITCREDIT_GPU_MEM_MB"] = str(int(getattr(resources, "gpu_mem_mb", 0) or 0))


def memory_budget_bytes() -> int | None:
    """The allocator cap this process set when it bound its GPUs (None: none, e.g. on CPU or
    without a declaration)."""
    return _budget["bytes"]


def parse_card_memory(csv: str) -> dict[str, int]:
    """Total MiB per device, keyed by both its index and its UUID, from ``nvidia-smi
    --query-gpu=index,uuid,memory.total --format=csv,noheader`` (``81559 MiB``)."""
    out = {}
    for line in csv.splitlines():
        if not line.strip():
            continue
        index, uuid, total = (part.strip() for part in line.split(","))
        mib = int(total.split()[0])
        out[index] = out[uuid] = mib
    return out


def card_memory() -> dict[str, int]:
    """This machine's devices' total MiB (:func:`parse_card_memory`); empty without
    ``nvidia-smi``."""
    try:
        answer = subprocess.run(
            MEMORY_QUERY, capture_output=True, text=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_card_memory(answer)


@dataclass(frozen=True)
class Claim:
    """One live claim of the ledger: ``mb`` MiB of device ``dev`` held by ``pid``."""

    dev: str
    mb: int
    pid: int


def live_claims(lock_dir: Path, dev: str) -> list[Claim]:
    """The claims on ``dev`` whose holders still hold them; files of gone holders are removed
    (call it under the device's ledger lock, :class:`_LedgerLock`, where claims are written)."""
    claims = []
    for path in sorted(Path(lock_dir).glob(f"gpu{dev}.*MiB.*.lock")):
        match = _CLAIM.fullmatch(path.name)
        if not match or match["dev"] != dev:
            continue
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held: a live claim (ours too: flock is per open file)
            claims.append(Claim(dev, int(match["mb"]), int(match["pid"])))
        else:
            path.unlink(missing_ok=True)  # its holder is gone
        finally:
            os.close(fd)
    return claims


class _LedgerLock:
    """Exclusive access to one device's ledger while a claim is weighed and written."""

    def __init__(self, lock_dir: Path, dev: str) -> None:
        self.path = Path(lock_dir) / f"gpu{dev}.ledger"

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o666)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc) -> None:
        os.close(self.fd)


def _claimed_mb(lock_dir: Path, dev: str) -> int:
    """MiB of ``dev`` that live claims hold (read under the ledger's lock, so a claim being
    written is never taken for a gone one)."""
    with _LedgerLock(lock_dir, dev):
        return sum(c.mb for c in live_claims(lock_dir, dev))


def _take(lock_dir: Path, dev: str, mb: int, card_mb: int) -> int | None:
    """Claim ``mb`` MiB of ``dev`` when its live claims leave them free; the held fd or None."""
    with _LedgerLock(lock_dir, dev):
        used = sum(c.mb for c in live_claims(lock_dir, dev))
        if used + mb > card_mb - RESERVE_MB:
            return None
        n = sum(1 for c in live_claims(lock_dir, dev) if c.pid == os.getpid())
        suffix = f".{n}" if n else ""
        path = Path(lock_dir) / f"gpu{dev}.{mb}MiB.{os.getpid()}{suffix}.lock"
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)  # the holder's pid: its processes on the GPU are the workflow's
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd


def claim_devices(
    candidates: list[str],
    n: int,
    mb: int,
    card_mb: dict[str, int],
    lock_dir: Path,
    foreign: dict[str, list[int]] | None = None,
) -> list[str]:
    """Claim ``mb`` MiB on each of ``n`` distinct devices (``card_mb``: each device's total),
    skipping those that ``foreign`` lists (device -> pids of processes outside the workflow);
    the claims stay held. A RuntimeError when fewer than ``n`` have room (a job that cannot get
    all it asked for holds nothing)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    foreign = foreign or {}
    claimed: list[str] = []
    fds: list[int] = []
    for dev in candidates:
        if foreign.get(dev):
            continue
        fd = _take(lock_dir, dev, mb, card_mb[dev])
        if fd is not None:
            fds.append(fd)
            claimed.append(dev)
        if len(claimed) == n:
            _held.extend(fds)
            return claimed
    for fd in fds:
        os.close(fd)  # releases the lock; the next reader removes the file
    busy = "".join(
        f"; GPU {dev} runs processes outside the workflow (pids {', '.join(map(str, pids))})"
        for dev, pids in foreign.items()
        if pids and dev in candidates
    )
    free = ", ".join(
        f"GPU {dev}: {card_mb[dev] - RESERVE_MB - _claimed_mb(lock_dir, dev)} of {card_mb[dev]}"
        " MiB free"
        for dev in candidates
        if dev in card_mb
    )
    raise RuntimeError(
        f"asked for {mb} MiB on each of {n} GPU(s) but only {len(claimed)} of {candidates} "
        f"have room ({free}; claims in {lock_dir}){busy}"
    )


def job_share_mb(declared_mb: int, gpus: int, card_mb: int) -> int:
    """MiB a job claims on each of its ``gpus`` devices: its declaration split evenly, or
    without one the card's ``1 / EDITCREDIT_JOBS_PER_GPU``."""
    if declared_mb > 0:
        return -(-declared_mb // gpus)
    return (card_mb - RESERVE_MB) // jobs_per_gpu()


def bind_gpus(n: int, declared_mb: int | None = None, wait_s: float | None = None) -> torch.device:
    """Claim ``n`` GPUs (0 = CPU) with ``declared_mb`` MiB of their memory in all (default
    :func:`declared_gpu_mem_mb`) and return the device to use; the allocator of each is capped
    at the claim. Waits up to ``wait_s`` (default ``EDITCREDIT_GPU_WAIT_S``, else 900 s) for
    room that other jobs of the workflow hold, then fails clearly."""
    if n <= 0 or not torch.cuda.is_available():
        return torch.device("cpu")
    declared = declared_gpu_mem_mb() if declared_mb is None else int(declared_mb)
    if os.environ.get("SLURM_JOB_ID") and os.environ.get("CUDA_VISIBLE_DEVICES"):
        _cap_allocators(declared, n)
        return torch.device("cuda")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    candidates = (
        visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    )
    cards = card_memory()
    missing = [dev for dev in candidates if dev not in cards]
    if missing:
        raise RuntimeError(
            f"cannot read the memory of GPU(s) {missing} (nvidia-smi --query-gpu=memory.total)"
        )
    share = max(job_share_mb(declared, n, cards[dev]) for dev in candidates)
    wait = float(os.environ.get("EDITCREDIT_GPU_WAIT_S", "900")) if wait_s is None else wait_s
    deadline = time.monotonic() + wait
    while True:
        foreign = foreign_processes(candidates, gpu_processes(), own_pids(LOCK_DIR))
        try:
            claimed = claim_devices(candidates, n, share, cards, LOCK_DIR, foreign)
            break
        except RuntimeError:
            if foreign or time.monotonic() >= deadline:
                raise
            time.sleep(2.0)
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(claimed)
    torch.cuda.set_device(0)
    _cap_allocators(share * n, n)
    return torch.device("cuda")


def _cap_allocators(declared_mb: int, n: int) -> None:
    """Cap the allocator of each of the ``n`` visible devices at its share of ``declared_mb``
    (less the process's overhead outside the allocator) and record the budget; nothing
    without a declaration."""
    if declared_mb <= 0:
        _budget["bytes"] = None
        return
    _grow_segments_in_place()
    budget = allocator_budget_bytes(-(-declared_mb // n))
    for index in range(n):
        total = torch.cuda.get_device_properties(index).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, budget / total), index)
    if _budget["bytes"] is None:
        atexit.register(_report_peak)
    _budget["bytes"] = budget


def _grow_segments_in_place() -> None:
    """Let the capped allocator grow its segments in place (PyTorch's ``expandable_segments``)
    unless ``PYTORCH_CUDA_ALLOC_CONF`` says otherwise. Under a cap, fixed-size segments
    fragment: an H100 study's evaluations failed creating a decode slot's cache with 2.2-2.4 GiB
    allocated, 550-900 MiB reserved but free in pieces too small, and their 3,328 MiB cap
    reached; with segments that grow, the same jobs peaked at 2,994-3,094 MiB reserved
    (docs/scale.md). It changes where memory lies, not what is computed."""
    if "expandable_segments" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
        return
    torch.cuda.memory._set_allocator_settings("expandable_segments:True")


def _report_peak() -> None:
    """The job's peak GPU memory against its budget, in its log (the figures of docs/scale.md)."""
    budget = _budget["bytes"]
    if budget is None or not torch.cuda.is_initialized():
        return
    for index in range(torch.cuda.device_count()):
        peak = torch.cuda.max_memory_reserved(index) / MIB
        allocated = torch.cuda.max_memory_allocated(index) / MIB
        print(
            f"GPU memory of {Path(sys.argv[0]).name} (pid {os.getpid()}): device {index} "
            f"peak reserved {peak:.0f} MiB, peak allocated "
            f"{allocated:.0f} MiB, allocator budget {budget / MIB:.0f} MiB",
            flush=True,
        )
    print(_outside_line(process_memory_mb(), torch.cuda.device_count()), flush=True)


def _outside_line(process_mb: int | None, devices: int) -> str:
    """The process's whole device memory now (``nvidia-smi``) and what of it lies outside the
    allocator (against the declared ``PROCESS_OVERHEAD_MB``), for the job's log."""
    if process_mb is None:
        return f"GPU memory of pid {os.getpid()} at exit: not listed by nvidia-smi"
    reserved = sum(torch.cuda.memory_reserved(i) for i in range(devices)) / MIB
    return (
        f"GPU memory of pid {os.getpid()} at exit: {process_mb} MiB in nvidia-smi, "
        f"{process_mb - reserved:.0f} MiB of it outside the allocator "
        f"(declared overhead {PROCESS_OVERHEAD_MB} MiB a device)"
    )
