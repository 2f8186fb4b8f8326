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
it failed), the mark goes and a waiter makes its own. The holder touches its marks every
``HEARTBEAT_S``; a mark whose process is gone (a job killed on this node) or that nobody touched
for ``STALE_S`` (a job killed on another node of a shared store) is taken over, and no mark is
waited on longer than ``WAIT_S``: the waiter then grades the key itself, unmarked.

Marks decide only who runs the tests first, never a report: the store is a cache and an entry is
never replaced, so a mark lost or broken at the wrong moment costs one more run of the same
tests, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

__all__ = ["HEARTBEAT_S", "STALE_S", "WAIT_S", "first_or_wait", "holder_alive", "this_process"]

#: The longest a job waits on another's mark before it runs the tests itself (a grading's own
#: limits end far sooner: a suite's whole-run limit is tens of seconds).
WAIT_S = 900.0
HEARTBEAT_S = 10.0  # how often a holder touches its marks
STALE_S = 120.0  # a mark untouched this long has lost its holder
POLL_S = (0.01, 0.1)  # the first and the longest pause between looks at the store

_held: set[Path] = set()  # this process's marks, touched by its heartbeat thread
_held_lock = threading.Lock()
_heartbeat: list[threading.Thread] = []


def _beat() -> None:
    while True:
        time.sleep(HEARTBEAT_S)
        with _held_lock:
            marks = list(_held)
        for mark in marks:
            with contextlib.suppress(OSError):
                os.utime(mark)


def _hold(mark: Path) -> None:
    with _held_lock:
        _held.add(mark)
        if not _heartbeat:
            thread = threading.Thread(target=_beat, name="in-flight-heartbeat", daemon=True)
            thread.start()
            _heartbeat.append(thread)


def _let_go(mark: Path) -> None:
    with _held_lock:
        _held.discard(mark)


def _after_fork() -> None:  # a forked child holds none of its parent's marks, nor its thread
    _held.clear()
    _heartbeat.clear()


os.register_at_fork(after_in_child=_after_fork)

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


def holder_alive(holder: dict, age_s: float = 0.0, node: str | None = None) -> bool:
    """Is the mark's process running? A mark untouched for ``STALE_S`` has lost its holder; a
    process of this node is looked up, one of another node is taken to be running."""
    if age_s > STALE_S:
        return False
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


def _read(mark: Path) -> tuple[str, dict, float] | None:
    """The mark's text, its holder and its age in seconds (None: gone or being written)."""
    try:
        text = mark.read_text(encoding="utf-8")
        age = time.time() - mark.stat().st_mtime
        return text, json.loads(text), age
    except (OSError, ValueError):
        return None


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
            try:
                found = stored()  # graded and unmarked between the look and the mark
            except BaseException:
                _remove_if(mark, body)
                raise
            if found is not None:
                _remove_if(mark, body)
                yield found
                return
            mine = True
            _hold(mark)
            break
        held = _read(mark)
        if held is not None and not holder_alive(held[1], held[2]):
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
            _let_go(mark)
            _remove_if(mark, body)
