"""Identity receipts of model directories: SHA256 of every file plus the config that made it.

Snakemake's own ``.snakemake_timestamp`` marker (written into directory outputs after the job
that made the receipt) and volatile sidecars (``*.volatile.json``: wall times, free disk, worker
addresses; ``editcredit.io.volatile.volatile_sidecar``) are not part of the identity.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from editcredit.io.atomic import atomic_write_text
from editcredit.io.hashing import sha256_file
from editcredit.io.provenance import code_version, config_hash, directory_digest
from editcredit.io.volatile import is_volatile

__all__ = [
    "IGNORED",
    "RECEIPT",
    "file_hashes",
    "files_sha256",
    "receipt_files",
    "verify_identity",
    "write_identity",
]

RECEIPT = "identity.json"
#: file names that are never part of an identity (Snakemake's directory-output marker)
IGNORED = frozenset({RECEIPT, ".snakemake_timestamp"})


def receipt_files(directory: Path) -> list[Path]:
    """The files an identity receipt covers, sorted."""
    return sorted(
        p
        for p in directory.rglob("*")
        if p.is_file() and p.name not in IGNORED and not is_volatile(p)
    )


def file_hashes(directory: Path, hasher: Callable[[Path], str] = sha256_file) -> dict[str, str]:
    return {p.relative_to(directory).as_posix(): hasher(p) for p in receipt_files(directory)}


def files_sha256(files: dict[str, str]) -> str:
    """SHA256 of a receipt's file table (``files``: relative path -> SHA256): the digest of
    the sorted (path, hash) pairs, as provenance hashes a directory. Code version and config
    are left out, so the value pins a directory's content (``models.<name>.receipt_sha256``)."""
    return directory_digest(sorted(files.items()))


def write_identity(
    directory: str | Path, config: Any, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write ``identity.json`` inside ``directory`` (hashes of every other file)."""
    directory = Path(directory)
    receipt = {
        "files": file_hashes(directory),
        "config": config,
        "config_sha256": config_hash(config),
        "code": code_version(),
        **(extra or {}),
    }
    atomic_write_text(directory / RECEIPT, json.dumps(receipt, indent=2, sort_keys=True) + "\n")
    return receipt


def verify_identity(
    directory: str | Path, hasher: Callable[[Path], str] = sha256_file
) -> list[str]:
    """Files whose hash differs from the receipt (missing and extra files included)."""
    directory = Path(directory)
    receipt = json.loads((directory / RECEIPT).read_text())
    actual = file_hashes(directory, hasher)
    expected = receipt["files"]
    return sorted(p for p in set(actual) | set(expected) if actual.get(p) != expected.get(p))
