"""Small helpers for the thin Snakemake scripts (kept here so tests can reach them)."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from editcredit.job_records import (
    attempt_line,
    attempt_log_path,
    fresh_attempt,
    write_failure_record,
)


class _Tee:
    """A text stream writing to several line-buffered files; anything else (``fileno``,
    ``encoding``, ...) is the first file's, so a library that writes to the descriptor itself
    still reaches the declared log."""

    def __init__(self, *streams: TextIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for s in self.streams:
            s.write(text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str):
        return getattr(self.streams[0], name)


@contextlib.contextmanager
def logged(log_path: str | Path) -> Iterator[str]:
    """Send this job's stdout, stderr and logging to its Snakemake log file; yield the attempt.

    Snakemake removes the declared log before each run, so every line also goes to the
    attempt's own log (``editcredit.job_records``: a new file per attempt, opened and closed by
    a line naming it), and a failing attempt writes its failure record before the exception
    leaves the job. The declared log is appended to, never truncated.
    """
    path = Path(log_path)
    attempt = fresh_attempt(path)
    own = attempt_log_path(path, attempt)
    own.parent.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with (
        open(path, "a", encoding="utf-8", buffering=1) as fh,
        open(own, "x", encoding="utf-8", buffering=1) as kept,
    ):
        out = _Tee(fh, kept)
        out.write(attempt_line(attempt, "started", started))
        old = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        logging.basicConfig(
            stream=out,
            level=logging.INFO,
            force=True,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        try:
            yield attempt
        except BaseException as exc:
            traceback.print_exc(file=out)
            try:
                record = f"record {write_failure_record(exc, attempt, path, started)}"
            except Exception as err:  # the job's own error must still leave the job
                record = f"no failure record ({type(err).__name__}: {err})"
            out.write(attempt_line(attempt, "failed", f"{type(exc).__name__}; {record}"))
            raise
        else:
            out.write(attempt_line(attempt, "ok"))
        finally:
            sys.stdout, sys.stderr = old
