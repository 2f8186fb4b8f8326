"""Small helpers for the thin Snakemake scripts (kept here so tests can reach them)."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from editcredit.job_records import attempt_id, attempt_line, write_failure_record


@contextlib.contextmanager
def logged(log_path: str | Path) -> Iterator[str]:
    """Send this job's stdout, stderr and logging to its Snakemake log file; yield the attempt.

    The log is appended to, never truncated: each attempt opens and closes with a line naming
    it (``editcredit.job_records``), and a failing attempt writes its failure record beside the
    log before the exception leaves the job.
    """
    path = Path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    attempt = attempt_id()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(path, "a", encoding="utf-8", buffering=1) as fh:
        fh.write(attempt_line(attempt, "started", started))
        old = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = fh
        logging.basicConfig(
            stream=fh,
            level=logging.INFO,
            force=True,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        try:
            yield attempt
        except BaseException as exc:
            traceback.print_exc(file=fh)
            try:
                record = f"record {write_failure_record(exc, attempt, path, started)}"
            except Exception as err:  # the job's own error must still leave the job
                record = f"no failure record ({type(err).__name__}: {err})"
            fh.write(attempt_line(attempt, "failed", f"{type(exc).__name__}; {record}"))
            raise
        else:
            fh.write(attempt_line(attempt, "ok"))
        finally:
            sys.stdout, sys.stderr = old
