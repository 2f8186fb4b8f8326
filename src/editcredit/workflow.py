"""Small helpers for the thin Snakemake scripts (kept here so tests can reach them)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def logged(log_path: str | Path) -> Iterator[None]:
    """Send this job's stdout, stderr and logging to its Snakemake log file."""
    path = Path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", buffering=1) as fh:
        old = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = fh
        logging.basicConfig(
            stream=fh,
            level=logging.INFO,
            force=True,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        try:
            yield
        except BaseException:
            import traceback

            traceback.print_exc(file=fh)
            raise
        finally:
            sys.stdout, sys.stderr = old
