"""SHA256 helpers: the hash of a text (every content hash of the project), and streaming hashes
for parameter audits.

``sha256_file`` hashes a file in bounded chunks. ``OrderedHasher`` feeds buffers to SHA256
objects on one background thread, in submission order; ``hashlib`` releases the GIL for large
updates, so hashing overlaps with reading and tensor comparison on the calling thread.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

__all__ = ["CHUNK_BYTES", "Digest", "OrderedHasher", "sha256_file", "sha256_text"]


class Digest(Protocol):
    """The part of a ``hashlib`` hash object used here."""

    def update(self, data: memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


#: read size for streaming hashes (within the 1-8 MiB range)
CHUNK_BYTES = 4 * 1024 * 1024


def sha256_text(text: str) -> str:
    """Hex SHA256 of a text's UTF-8 bytes: the content hash of files, patches and canonical JSON."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike[str], chunk_bytes: int = CHUNK_BYTES) -> str:
    """Hex SHA256 of a file, read in ``chunk_bytes`` pieces into one reused buffer."""
    digest = hashlib.sha256()
    buf = bytearray(chunk_bytes)
    view = memoryview(buf)
    with open(Path(path), "rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            digest.update(view[:n])
    return digest.hexdigest()


class OrderedHasher:
    """One worker thread that applies hash updates in the order they were submitted.

    Callers must keep each submitted buffer unchanged until the returned future is done.
    """

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def update(self, digest: Digest, data: memoryview) -> Future[None]:
        """Queue ``digest.update(data)``."""
        return self._pool.submit(digest.update, data)

    def hexdigest(self, digest: Digest) -> Future[str]:
        """Queue ``digest.hexdigest()``, resolved after every earlier update."""
        return self._pool.submit(digest.hexdigest)

    def submit_file(self, path: str | os.PathLike[str]) -> Future[str]:
        """Queue a whole-file hash (for files that are not scanned tensor by tensor)."""
        return self._pool.submit(sha256_file, path)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> OrderedHasher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
