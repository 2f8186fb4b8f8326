"""Identity receipts of model directories: SHA256 of every file plus the config that made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from editcredit.audit.provenance import atomic_write_text, code_version, config_hash, sha256_file

RECEIPT = "identity.json"


def file_hashes(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != RECEIPT
    }


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


def verify_identity(directory: str | Path) -> list[str]:
    """Files whose hash differs from the receipt (missing and extra files included)."""
    directory = Path(directory)
    receipt = json.loads((directory / RECEIPT).read_text())
    actual = file_hashes(directory)
    expected = receipt["files"]
    return sorted(p for p in set(actual) | set(expected) if actual.get(p) != expected.get(p))
