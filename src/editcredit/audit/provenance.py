"""The provenance block carried by every result file: code version, config hash, input hashes.

One helper writes result files (``write_result_json``) so that no result lacks the block, and
files are written atomically (a temp file renamed into place: nothing half-written).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from editcredit import __version__

CHUNK = 4 * 1024 * 1024


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_path(path: str | Path) -> str:
    """SHA256 of a file, or of a directory as the hash of its sorted (relative path, hash)."""
    p = Path(path)
    if p.is_file():
        return sha256_file(p)
    h = hashlib.sha256()
    for child in sorted(q for q in p.rglob("*") if q.is_file()):
        h.update(f"{child.relative_to(p).as_posix()}\0{sha256_file(child)}\n".encode())
    return h.hexdigest()


def config_hash(config: Any) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def code_version(repo: str | Path | None = None) -> dict[str, Any]:
    """Git commit of the code and whether the tree had uncommitted changes."""
    cwd = Path(repo) if repo else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=cwd,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", None
    return {"package_version": __version__, "git_commit": commit, "git_dirty": dirty}


def provenance(inputs: Iterable[str | Path], config: Any) -> dict[str, Any]:
    """The block: code version, config hash, SHA256 of each input (files or directories)."""
    return {
        "code": code_version(),
        "config_sha256": config_hash(config),
        "inputs": {str(p): sha256_path(p) for p in sorted(map(str, inputs))},
    }


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write through a temp file in the same directory, then rename: all or nothing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_result_json(
    path: str | Path, result: dict[str, Any], inputs: Iterable[str | Path], config: Any
) -> None:
    """Write ``result`` with its ``provenance`` block as pretty, key-sorted JSON."""
    if "provenance" in result:
        raise ValueError(f"{path}: result already holds a 'provenance' key")
    body = {**result, "provenance": provenance(inputs, config)}
    atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
