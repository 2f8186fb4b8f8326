"""Volatile sidecars: the facts of a result that a rerun does not reproduce.

Wall seconds, free disk, worker addresses, attempt timestamps are measured facts, but the clock,
the host or the run decides them, so a result file that held them would differ on every rebuild
and so would every file downstream that hashes it. They go to a sidecar beside the result
(:func:`volatile_sidecar`: ``segment.json`` -> ``segment.volatile.json``) that no
hash, identity receipt or provenance block covers (``list_files`` and ``receipt_files`` leave it
out). The cost accounting reads them: the cost table (from the files rule render_tables
declares) and a run's budget ledger.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from editcredit.io.atomic import atomic_write_text

__all__ = ["VOLATILE_SUFFIX", "is_volatile", "read_volatile", "volatile_sidecar", "write_volatile"]

VOLATILE_SUFFIX = ".volatile.json"
"""The one name ending of a volatile sidecar: the facts of a result that the clock, the host or
the run decides (wall seconds, free disk, worker addresses, attempt timestamps), kept beside the
result (``segment.json`` -> ``segment.volatile.json``) so that the result itself is the same bytes
on every rebuild. No hash, identity receipt or provenance block covers a sidecar; only the cost
accounting reads them (the cost table, a run's budget ledger)."""


def volatile_sidecar(path: str | Path) -> str:
    """The sidecar of a result file: ``a/b/segment.json`` -> ``a/b/segment.volatile.json``,
    ``a/slots.parquet`` -> ``a/slots.volatile.json`` (the name up to its first dot)."""
    p = Path(path)
    return (p.parent / f"{p.name.split('.', 1)[0]}{VOLATILE_SUFFIX}").as_posix()


def is_volatile(path: str | Path) -> bool:
    """Whether ``path`` is a volatile sidecar (left out of every hash)."""
    return Path(path).name.endswith(VOLATILE_SUFFIX)


def write_volatile(result: str | Path, facts: dict[str, Any]) -> Path:
    """Write the sidecar of ``result`` (key-sorted JSON, atomically); return its path."""
    path = Path(volatile_sidecar(result))
    atomic_write_text(path, json.dumps(facts, indent=2, sort_keys=True) + "\n")
    return path


def read_volatile(result: str | Path) -> dict[str, Any]:
    """The sidecar of ``result``; an error naming the sidecar when it is missing or unreadable."""
    path = Path(volatile_sidecar(result))
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"{path}: the volatile sidecar of {result} is missing (built by older code? "
            "rebuild the result)"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the volatile sidecar: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError(f"{path}: a volatile sidecar is a JSON object")
    return body
