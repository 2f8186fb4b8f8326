"""SHA256 of files and directories, each file hashed at most once (``editcredit verify``).

``prefetch`` hashes a batch of files on a few threads (``hashlib`` releases the GIL), with a
progress bar on a terminal; later ``file``/``path`` calls are dictionary look-ups. Directory
digests follow ``provenance.sha256_path``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tqdm import tqdm

from editcredit.io.hashing import sha256_file
from editcredit.io.provenance import list_files, sha256_path

__all__ = ["HashCache"]


class HashCache:
    """Memoised file hashes keyed by absolute path; ``hashed`` counts the files actually read."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or min(4, os.cpu_count() or 1)
        self._sha: dict[Path, str] = {}
        self._lock = threading.Lock()
        self.hashed = 0
        self.bytes = 0

    def file(self, path: Path) -> str:
        """SHA256 of one file (``FileNotFoundError`` when it is gone)."""
        key = Path(os.path.abspath(path))
        digest = self._sha.get(key)
        if digest is None:
            digest = sha256_file(key)
            with self._lock:
                self._sha[key] = digest
                self.hashed += 1
                self.bytes += key.stat().st_size
        return digest

    def path(self, path: Path) -> str:
        """SHA256 of a file, or the directory digest of ``provenance.sha256_path``."""
        return sha256_path(path, self.file)

    def prefetch(self, paths: Iterable[Path], desc: str = "hashing") -> None:
        """Hash every file of ``paths`` (directories expanded) that is not cached yet."""
        todo: dict[Path, None] = {}
        for p in paths:
            p = Path(os.path.abspath(p))
            for f in list_files(p) if p.is_dir() else [p] if p.is_file() else []:
                if f not in self._sha:
                    todo[f] = None
        if not todo:
            return
        files = sorted(todo, key=lambda f: -f.stat().st_size)  # big first: better balance
        with (
            ThreadPoolExecutor(self.workers, thread_name_prefix="verify-sha") as pool,
            tqdm(total=len(files), desc=desc, unit="file", disable=None, leave=False) as bar,
        ):
            for _ in pool.map(self._quiet, files):
                bar.update()

    def _quiet(self, path: Path) -> None:
        with contextlib.suppress(OSError):  # reported when the caller asks for it
            self.file(path)
