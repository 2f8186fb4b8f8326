"""Marks of gradings in progress in the report store, so concurrent jobs run each key once.

The store (:mod:`editcredit.sandbox.report_store`) lets a later job read what an earlier one
graded, but jobs that run at the same time (the evaluations of a GPU box, where a dozen models
play the same holdout tasks at once; two jobs on a laptop's two cores) meet the same new trees
together, and each ran the tests itself: on a 16-core box the first wave of evaluations ran
about 600 gradings each where a later one ran 20 to 130, and that wave held every core.

A job about to grade a key that is not in the store first makes a mark beside the entry
(``<key>.running``, created exclusively, holding the node, the process and its start time). A
job that finds a live mark waits for the entry instead of grading (its thread holds no sandbox
while it waits). When the holder ends without an entry (its run was not one the store keeps, or
it failed), the mark goes and a waiter makes its own. A mark whose process is gone (a job killed
on this node) is taken over; no mark is waited on longer than ``WAIT_S`` (a holder on another
node cannot be seen to be gone), and then the waiter grades the key itself, unmarked.

Marks decide only who runs the tests first, never a report: the store is a cache and an entry is
never replaced, so a mark lost or broken at the wrong moment costs one more run of the same
tests, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

__all__ = ["WAIT_S", "first_or_wait", "holder_alive", "this_process"]

#: The longest a job waits on another's mark before it runs the tests itself (a grading's own
#: limits end far sooner: a suite's whole-run limit is tens of seconds).
WAIT_S = 900.0
POLL_S = (0.01, 0.1)  # the first and the longest pause between looks at the store

T = TypeVar("T")


def _node() -> str:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def _started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (None: no such process here)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def this_process() -> dict[str, object]:
    """What a mark says of its holder."""
    return {"node": _node(), "pid": os.getpid(), "started": _started(os.getpid())}


def holder_alive(holder: dict, node: str | None = None) -> bool:
    """Is the mark's process running? Only a process of this node can be seen to be gone; one
    of another node counts as running (``WAIT_S`` bounds the wait on it)."""
    if holder.get("node") != (node or _node()):
        return True
    pid = holder.get("pid")
    return isinstance(pid, int) and _started(pid) == holder.get("started")


def _make(mark: Path, body: str) -> bool:
    try:
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)
    return True


def _read(mark: Path) -> tuple[str, dict] | None:
    try:
        text = mark.read_text(encoding="utf-8")
        return text, json.loads(text)
    except (OSError, ValueError):
        return None  # gone, or being written: look again


def _remove_if(mark: Path, text: str) -> None:
    """Remove the mark if it still says ``text`` (a newer holder's mark stays)."""
    with contextlib.suppress(OSError):
        if mark.read_text(encoding="utf-8") == text:
            mark.unlink()


@contextlib.contextmanager
def first_or_wait(
    mark: Path,
    stored: Callable[[], T | None],
    wait_s: float = WAIT_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[T | None]:
    """The stored entry (``stored()``), waiting while a live process holds ``mark``; None when
    this process is to grade: it then holds the mark until the block ends (unless it waited
    ``wait_s`` on another's, when it grades unmarked)."""
    mark.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(this_process(), sort_keys=True)
    since = clock()
    pause = POLL_S[0]
    mine = False
    while True:
        found = stored()
        if found is not None:
            yield found
            return
        if _make(mark, body):
            found = stored()  # graded and unmarked between the look and the mark
            if found is not None:
                _remove_if(mark, body)
                yield found
                return
            mine = True
            break
        held = _read(mark)
        if held is not None and not holder_alive(held[1]):
            _remove_if(mark, held[0])  # its job is gone: take the mark over
            continue
        if clock() - since >= wait_s:
            break
        sleep(pause)
        pause = min(pause * 2, POLL_S[1])
    try:
        yield None
    finally:
        if mine:
            _remove_if(mark, body)
