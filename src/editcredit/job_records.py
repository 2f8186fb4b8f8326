"""What every attempt of a workflow job leaves behind, so that a rerun erases no failure.

An attempt has an identity, ``{UTC stamp}-{host}-{pid}`` (``attempt_id``). Its log is appended
to the rule's log file between an opening and a closing line that carry the identity, so the
log of a rerun follows the failed attempt's log instead of replacing it. A failing attempt also
writes a failure record beside its log, ``{log stem}.failed-{attempt}.json`` (``failure_path``),
before the job fails: the attempt, the error's type and message, the traceback, and the
structured record the error carries (an exception with a ``record`` mapping attribute, e.g. a
failed parameter audit's full result). A new file per attempt: nothing is ever truncated.
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

from editcredit.audit.provenance import atomic_write_text

__all__ = [
    "FAILURE_INFIX",
    "attempt_id",
    "attempt_line",
    "failure_path",
    "failure_record",
    "write_failure_record",
]

#: a failure record is named ``{log stem}{FAILURE_INFIX}{attempt}.json``
FAILURE_INFIX = ".failed-"


def attempt_id(now: float | None = None, host: str | None = None, pid: int | None = None) -> str:
    """``{YYYYmmddTHHMMSSZ}-{host}-{pid}``: unique per attempt, sortable by start time."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    host = (host if host is not None else socket.gethostname()).split(".")[0] or "host"
    host = "".join(c if c.isalnum() or c in "-_" else "_" for c in host)
    return f"{stamp}-{host}-{os.getpid() if pid is None else pid}"


def attempt_line(attempt: str, event: str, detail: str = "") -> str:
    """One line of the log that opens or closes an attempt (``event``: started, ok, failed)."""
    return f"=== editcredit attempt {attempt} {event}" + (f": {detail}" if detail else "") + "\n"


def failure_path(log_path: str | Path, attempt: str) -> Path:
    """The failure record of ``attempt`` beside its log: ``step_2.log`` ->
    ``step_2.failed-{attempt}.json``."""
    log = Path(log_path)
    return log.with_name(f"{log.stem}{FAILURE_INFIX}{attempt}.json")


def failure_record(
    exc: BaseException, attempt: str, log_path: str | Path, started: str
) -> dict[str, Any]:
    """The record of a failed attempt (JSON-ready)."""
    record = getattr(exc, "record", None)
    return {
        "attempt": attempt,
        "log": str(log_path),
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
