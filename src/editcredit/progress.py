"""Where a long job is, and about how long it has left, on its log.

A job counts its items (an evaluation's slots, a segment's steps, the stop study's trees) in a
:class:`Progress`; while it runs, a line such as

    progress eval base/holdout: 120/392 slots (30 %), 41 s elapsed, ~1 min 33 s left; batch 2/4

goes to stderr every ``every`` seconds (a job's stderr is its log under
:func:`editcredit.workflow.logged`), and one more when it ends. The estimate is linear in this
run's own rate (items resumed from an earlier attempt are not counted as made by this run);
before this run has finished an item there is none yet. Progress goes to the log only: no
result file ever holds it, so results stay byte-identical.

``EDITCREDIT_PROGRESS_SECONDS`` sets the interval (default 10; 0 turns the lines off).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

__all__ = [
    "DEFAULT_EVERY",
    "Progress",
    "format_seconds",
    "interval_from_env",
    "progress_line",
    "seconds_left",
]

#: seconds between two lines of a running job
DEFAULT_EVERY = 10.0
ENV = "EDITCREDIT_PROGRESS_SECONDS"


def format_seconds(seconds: float) -> str:
    """``41 s``, ``3 min 05 s``, ``1 h 02 min`` (rounded to the second)."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"format_seconds: {seconds!r} is not a duration")
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def seconds_left(done: int, total: int, elapsed: float, done_at_start: int = 0) -> float | None:
    """What is left at this run's rate: ``(total - done) * elapsed / (done - done_at_start)``;
    0 when every item is done, None while this run has made none (no rate yet)."""
    if done >= total:
        return 0.0
    made = done - done_at_start
    if made <= 0 or elapsed <= 0:
        return None
    return (total - done) * elapsed / made


def progress_line(
    label: str,
    done: int,
    total: int,
    unit: str,
    elapsed: float,
    left: float | None,
    detail: str = "",
) -> str:
    """One line of progress (no newline)."""
    share = f" ({100 * done // total} %)" if total > 0 else ""
    if done >= total:
        estimate = "done"
    elif left is None:
        estimate = "no estimate before the first is done"
    else:
        estimate = f"~{format_seconds(left)} left"
    text = f"progress {label}: {done}/{total} {unit}{share}, {format_seconds(elapsed)} elapsed"
    return f"{text}, {estimate}" + (f"; {detail}" if detail else "")


def interval_from_env(default: float = DEFAULT_EVERY) -> float:
    """The interval ``EDITCREDIT_PROGRESS_SECONDS`` asks for (``default`` when unset)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENV}={raw!r}: not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{ENV}={raw!r}: not a number of seconds >= 0")
    return value


class Progress:
    """A job's progress: ``update`` it as items finish (or give ``count``, read at each line).
    Started (``start``, or as a context manager), a daemon thread writes a line every ``every``
    seconds until ``close``, which writes one more (as a context manager: when the job did not
    fail). ``every`` None reads ``EDITCREDIT_PROGRESS_SECONDS``; 0 writes
    nothing. ``stream`` None writes to ``sys.stderr`` as it is at each line."""

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        *,
        every: float | None = None,
        count: Callable[[], int] | None = None,
        done: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.unit = label, int(total), unit
        self.every = interval_from_env() if every is None else float(every)
        self._count, self._stream, self._clock = count, stream, clock
        self._lock = threading.Lock()
        self._done = int(count()) if count is not None else int(done)
        self._done_at_start = self._done
        self._detail = ""
        self._started = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, done: int | None = None, *, advance: int = 0, detail: str | None = None):
        """Set the count (``done``), add to it (``advance``), or say where the job is."""
        with self._lock:
            if done is not None:
                self._done = int(done)
            self._done += int(advance)
            if detail is not None:
                self._detail = detail

    def line(self) -> str:
        """The line for now (reads ``count`` when given)."""
        if self._count is not None:
            counted = int(self._count())
            with self._lock:
                self._done = counted
        with self._lock:
            done, detail = self._done, self._detail
        elapsed = max(0.0, self._clock() - self._started)
        left = seconds_left(done, self.total, elapsed, self._done_at_start)
        return progress_line(self.label, done, self.total, self.unit, elapsed, left, detail)

    def report(self) -> None:
        """Write the line now (nothing when ``every`` is 0)."""
        if self.every <= 0:
            return
        stream = self._stream or sys.stderr
        stream.write(self.line() + "\n")
        stream.flush()

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.report()
            except Exception:  # noqa: BLE001 - progress never stops a job
                return

    def start(self) -> Progress:
        """Start the thread that writes a line every ``every`` seconds; returns ``self``."""
        if self.every > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)
            self._thread.start()
        return self

    def close(self, final: bool = True) -> None:
        """Stop the thread; with ``final``, write the closing line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if final:
            self.report()

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(final=exc_type is None)
