"""The storage monitor of training and evaluation jobs (METHOD §5): free bytes and free inodes of
the output's file system, read before each training step and each evaluation batch.

:func:`shortfall` decides from the numbers alone; :class:`StorageMonitor` reads them
(``os.statvfs``), and below the floor writes a receipt under ``logs/storage/{job}/`` (a new
file per stop, never one overwritten) and raises :class:`StorageLow` before the job writes any
declared output. The floor is ``training.health.min_free_disk_gb`` and
``training.health.min_free_inodes``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from editcredit.layout import storage_receipt

statvfs = os.statvfs
"""The probe (tests replace it here, for this module only)."""


@dataclass(frozen=True)
class DiskState:
    """What ``statvfs`` says of one file system (inodes 0 of 0: it does not count them)."""

    free_bytes: int
    free_inodes: int
    total_inodes: int


@dataclass(frozen=True)
class Floor:
    """What must stay free: bytes (beyond what the job is about to write) and inodes."""

    min_free_bytes: int
    min_free_inodes: int

    @classmethod
    def from_health(cls, health: Mapping[str, Any]) -> Floor:
        """The floor of config ``training.health``."""
        return cls(int(float(health["min_free_disk_gb"]) * 1e9), int(health["min_free_inodes"]))


def probe(path: str | Path) -> DiskState:
    """Free bytes (for an unprivileged user) and free inodes of ``path``'s file system."""
    st = statvfs(path)
    return DiskState(st.f_bavail * st.f_frsize, st.f_favail, st.f_files)


def shortfall(state: DiskState, floor: Floor, need_bytes: int = 0) -> list[str]:
    """Why ``state`` is below ``floor`` once ``need_bytes`` more are written (empty: it is not).
    A file system that counts no inodes (``total_inodes`` 0) has no inode shortfall."""
    reasons = []
    left = state.free_bytes - need_bytes
    if left < floor.min_free_bytes:
        reasons.append(
            f"{state.free_bytes / 1e9:.3f} GB free"
            + (f", {need_bytes / 1e9:.3f} GB about to be written" if need_bytes else "")
            + f": below the {floor.min_free_bytes / 1e9:.3f} GB floor "
            "(training.health.min_free_disk_gb)"
        )
    if state.total_inodes > 0 and state.free_inodes < floor.min_free_inodes:
        reasons.append(
            f"{state.free_inodes} inodes free: below the {floor.min_free_inodes} floor "
            "(training.health.min_free_inodes)"
        )
    return reasons


class StorageLow(RuntimeError):
    """A job stopped by the storage monitor; ``receipt`` is where its receipt lies."""

    def __init__(self, message: str, receipt: Path) -> None:
        super().__init__(message)
        self.receipt = receipt


def write_new_receipt(job: str, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as the job's next storage receipt (attempt 1, 2, ...): written whole
    through a temporary file and linked into place only under a name that does not exist."""
    text = json.dumps(dict(record), indent=2, sort_keys=True) + "\n"
    first = Path(storage_receipt(job, 1))
    first.parent.mkdir(parents=True, exist_ok=True)
    tmp = first.with_name(f".tmp-{os.getpid()}.json")
    tmp.write_text(text, encoding="utf-8")
    try:
        attempt = 1
        while True:
            path = Path(storage_receipt(job, attempt))
            try:
                os.link(tmp, path)
                return path
            except FileExistsError:
                attempt += 1
    finally:
        tmp.unlink()


class StorageMonitor:
    """Checks the file system of ``path`` against ``floor`` for the job named ``job``."""

    def __init__(self, path: str | Path, floor: Floor, job: str) -> None:
        self.path, self.floor, self.job = Path(path), floor, job
        self.checks = 0

    def check(self, where: str, need_bytes: int = 0) -> DiskState:
        """Read the file system; below the floor, write a receipt and raise StorageLow."""
        state = probe(self.path)
        self.checks += 1
        reasons = shortfall(state, self.floor, need_bytes)
        if reasons:
            record = {
                "job": self.job,
                "where": where,
                "path": self.path.as_posix(),
                "need_bytes": int(need_bytes),
                "state": asdict(state),
                "floor": asdict(self.floor),
                "reasons": reasons,
            }
            receipt = write_new_receipt(self.job, record)
            raise StorageLow(
                f"{self.job}: stopped {where}: {'; '.join(reasons)}; nothing was written "
                f"(receipt {receipt})",
                receipt,
            )
        return state


def existing_parent(path: str | Path) -> Path:
    """``path`` or its nearest existing ancestor (an output directory may not exist yet)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p
