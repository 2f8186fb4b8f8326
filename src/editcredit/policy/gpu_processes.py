"""Processes on the GPUs that are not the workflow's: what the lock pool must not share.

``nvidia-smi`` lists the compute processes of every device; a process is the workflow's when it
is, or descends from, a job that holds one of the pool's locks (each lock file records its
holder's pid), or this process. Everything else (another user's training, a notebook, a stale
server) is foreign, and the pool skips its device (``editcredit.policy.devices``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

__all__ = [
    "foreign_processes",
    "gpu_processes",
    "lock_holders",
    "own_pids",
    "parent_pid",
    "parse_gpu_processes",
    "parse_process_memory",
    "process_memory_mb",
]

GPU_QUERY = ["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"]
APPS_QUERY = ["nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader"]
MEMORY_QUERY = [
    "nvidia-smi",
    "--query-compute-apps=pid,used_memory",
    "--format=csv,noheader,nounits",
]


def parse_gpu_processes(gpus_csv: str, apps_csv: str) -> dict[str, list[int]]:
    """Compute-process pids per device, keyed by both its index and its UUID (the two forms
    ``CUDA_VISIBLE_DEVICES`` takes), from the two ``nvidia-smi`` CSV answers."""
    uuid_index = {}
    for line in gpus_csv.splitlines():
        if line.strip():
            index, uuid = (part.strip() for part in line.split(","))
            uuid_index[uuid] = index
    out: dict[str, list[int]] = {k: [] for pair in uuid_index.items() for k in pair}
    for line in apps_csv.splitlines():
        if not line.strip():
            continue
        uuid, pid = (part.strip() for part in line.split(","))
        if uuid in uuid_index and pid.isdigit():
            for key in (uuid, uuid_index[uuid]):
                out[key].append(int(pid))
    return {k: sorted(v) for k, v in out.items()}


def gpu_processes(run: Callable[..., subprocess.CompletedProcess] = subprocess.run):
    """:func:`parse_gpu_processes` of this machine; None when ``nvidia-smi`` cannot answer
    (the pool then works from its locks alone)."""
    try:
        gpus, apps = (
            run(cmd, capture_output=True, text=True, check=True, timeout=30).stdout
            for cmd in (GPU_QUERY, APPS_QUERY)
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_gpu_processes(gpus, apps)


def parse_process_memory(apps_csv: str, pid: int) -> int | None:
    """The device memory (MiB, every device together) ``nvidia-smi`` reports for ``pid``, from
    its ``pid,used_memory`` CSV answer without units; None when the process is not listed (a
    container may show other pids) or the driver does not report it."""
    total, seen = 0, False
    for line in apps_csv.splitlines():
        if not line.strip():
            continue
        listed, used = (part.strip() for part in line.split(","))
        if listed == str(pid) and used.isdigit():
            total, seen = total + int(used), True
    return total if seen else None


def process_memory_mb(
    pid: int | None = None, run: Callable[..., subprocess.CompletedProcess] = subprocess.run
) -> int | None:
    """:func:`parse_process_memory` of ``pid`` (this process by default) on this machine: its
    whole device memory, allocator and all that lies outside it; None without an answer."""
    try:
        out = run(MEMORY_QUERY, capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_process_memory(out, os.getpid() if pid is None else pid)


def parent_pid(pid: int) -> int | None:
    """The parent of ``pid`` from ``/proc/<pid>/stat``; None when it is gone or unreadable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]) if len(fields) > 1 else None


def lock_holders(lock_dir: Path) -> set[int]:
    """Pids recorded in the pool's lock files (a job writes its pid into each lock it takes)."""
    pids = set()
    for path in Path(lock_dir).glob("gpu*.lock"):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            pids.add(int(text))
    return pids


def _descends(pid: int, ancestors: set[int], parent: Callable[[int], int | None]) -> bool:
    seen = set()
    while pid and pid not in seen:
        if pid in ancestors:
            return True
        seen.add(pid)
        pid = parent(pid) or 0
    return False


def foreign_processes(
    candidates: Iterable[str],
    processes: Mapping[str, list[int]] | None,
    ours: set[int],
    parent: Callable[[int], int | None] = parent_pid,
) -> dict[str, list[int]]:
    """Per candidate device, the pids on it that neither are nor descend from ``ours`` (the
    lock holders and this process); devices without any are left out."""
    out = {}
    for dev in candidates:
        pids = [p for p in (processes or {}).get(dev, []) if not _descends(p, ours, parent)]
        if pids:
            out[dev] = pids
    return out


def own_pids(lock_dir: Path) -> set[int]:
    """The workflow's processes as the pool sees them: the lock holders and this process."""
    return lock_holders(lock_dir) | {os.getpid()}
