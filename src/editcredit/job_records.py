"""What every attempt of a workflow job leaves behind, so that a rerun erases no failure.

Snakemake removes a rule's declared log before each run of the rule, so the declared log holds
the latest attempt only. Every attempt therefore also keeps its own files, under its identity
``{UTC stamp}-{host}-{pid}`` (``attempt_id``), in a directory beside the declared log that
Snakemake does not know (``attempts_dir``: ``step_4.log`` -> ``step_4.attempts/``):

- ``{attempt}.log``: the attempt's whole log (the same lines as the declared log), opened and
  closed by a line naming the attempt (``attempt_line``);
- ``{attempt}.failed.json``: written by a failing attempt before the job fails: the attempt,
  the error's type and message, the traceback, and the structured record the error carries
  (an exception with a ``record`` mapping attribute, e.g. a failed parameter audit's result).

New files only: nothing here is ever truncated or overwritten.
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editcredit.io.atomic import atomic_write_text

__all__ = [
    "ATTEMPTS_SUFFIX",
    "attempt_id",
    "attempt_line",
    "attempt_log_path",
    "attempts_dir",
    "failure_path",
    "failure_record",
    "fresh_attempt",
    "write_failure_record",
]

#: the attempts of ``{stem}.log`` live in ``{stem}{ATTEMPTS_SUFFIX}/``
ATTEMPTS_SUFFIX = ".attempts"


def attempt_id(now: float | None = None, host: str | None = None, pid: int | None = None) -> str:
    """``{YYYYmmddTHHMMSSZ}-{host}-{pid}``: unique per attempt, sortable by start time."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    host = (host if host is not None else socket.gethostname()).split(".")[0] or "host"
    host = "".join(c if c.isalnum() or c in "-_" else "_" for c in host)
    return f"{stamp}-{host}-{os.getpid() if pid is None else pid}"


def fresh_attempt(log_path: str | Path, now: float | None = None) -> str:
    """An ``attempt_id`` that no attempt of ``log_path`` has used (``.2``, ``.3``, ... is added
    when one process starts two attempts within a second)."""
    base = attempt = attempt_id(now)
    n = 1
    while attempt_log_path(log_path, attempt).exists() or failure_path(log_path, attempt).exists():
        n += 1
        attempt = f"{base}.{n}"
    return attempt


def attempt_line(attempt: str, event: str, detail: str = "") -> str:
    """One line of the log that opens or closes an attempt (``event``: started, ok, failed)."""
    return f"=== editcredit attempt {attempt} {event}" + (f": {detail}" if detail else "") + "\n"


def attempts_dir(log_path: str | Path) -> Path:
    """Where the attempts of a declared log are kept: ``step_4.log`` -> ``step_4.attempts``."""
    log = Path(log_path)
    return log.with_name(log.stem + ATTEMPTS_SUFFIX)


def attempt_log_path(log_path: str | Path, attempt: str) -> Path:
    """The attempt's own copy of its log."""
    return attempts_dir(log_path) / f"{attempt}.log"


def failure_path(log_path: str | Path, attempt: str) -> Path:
    """The failure record of a failed attempt."""
    return attempts_dir(log_path) / f"{attempt}.failed.json"


def failure_record(
    exc: BaseException, attempt: str, log_path: str | Path, started: str
) -> dict[str, Any]:
    """The record of a failed attempt (JSON-ready)."""
    record = getattr(exc, "record", None)
    return {
        "attempt": attempt,
        "log": str(log_path),
        "attempt_log": str(attempt_log_path(log_path, attempt)),
        "started": started,
        "failed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "error_type": type(exc).__name__,
        "error": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        "record": dict(record) if isinstance(record, Mapping) else None,
    }


def write_failure_record(
    exc: BaseException, attempt: str, log_path: str | Path, started: str
) -> Path:
    """Write the failure record of ``attempt`` (a new file, never an overwrite: a name already
    taken gets a counter); return it."""
    path, n = failure_path(log_path, attempt), 1
    while path.exists():
        n += 1
        path = failure_path(log_path, f"{attempt}.{n}")
    body = failure_record(exc, attempt, log_path, started)
    atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True, default=str) + "\n")
    return path
