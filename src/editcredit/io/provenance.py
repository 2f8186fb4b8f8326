"""The provenance block carried by every result file: code version, config hash, input hashes.

The code version is ``code_identity``'s block: the commit and, for a dirty tree, the SHA256 of
the uncommitted diff and of the untracked files. One module writes result files so that no
result lacks the block: ``write_result_json`` (a
``provenance`` key), ``write_result_parquet`` (the block in the schema metadata under
``editcredit.provenance``) and ``write_result_tex`` (a first line
``% editcredit-provenance: {json}``). ``read_provenance`` reads the block back from any of the
three. Files are written atomically (``atomic``: a temp file renamed into place, nothing
half-written).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from editcredit import __version__
from editcredit.io.atomic import atomic_write_text
from editcredit.io.code_identity import code_identity, git_tree_state
from editcredit.io.hashing import sha256_file, sha256_text
from editcredit.io.volatile import is_volatile

__all__ = [
    "PARQUET_KEY",
    "TEX_PREFIX",
    "code_version",
    "config_hash",
    "directory_digest",
    "list_files",
    "provenance",
    "read_provenance",
    "sha256_file",
    "sha256_path",
    "tex_provenance_line",
    "write_result_json",
    "write_result_parquet",
    "write_result_tex",
]

#: the schema-metadata key of the block in a Parquet result
PARQUET_KEY = b"editcredit.provenance"
#: the first line of a LaTeX result is this prefix followed by the block as one-line JSON
TEX_PREFIX = "% editcredit-provenance: "


def list_files(directory: str | Path) -> list[Path]:
    """Every file under ``directory`` (recursively), in the order directory digests use; a
    volatile sidecar (``volatile.VOLATILE_SUFFIX``: wall times and the like) is no part of it."""
    return sorted(q for q in Path(directory).rglob("*") if q.is_file() and not is_volatile(q))


def directory_digest(entries: Iterable[tuple[str, str]]) -> str:
    """SHA256 over ``(relative posix path, file SHA256)`` pairs, in the given order."""
    h = hashlib.sha256()
    for rel, digest in entries:
        h.update(f"{rel}\0{digest}\n".encode())
    return h.hexdigest()


def sha256_path(path: str | Path, file_hash: Callable[[Path], str] = sha256_file) -> str:
    """SHA256 of a file, or of a directory as the hash of its sorted (relative path, hash).

    ``file_hash`` hashes one file (a cache may stand in for ``sha256_file``).
    """
    p = Path(path)
    if p.is_file():
        return file_hash(p)
    if not p.is_dir():
        raise FileNotFoundError(f"{p}: no such file or directory (a provenance input)")
    return directory_digest((q.relative_to(p).as_posix(), file_hash(q)) for q in list_files(p))


def config_hash(config: Any) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return sha256_text(text)


def code_version(repo: str | Path | None = None) -> dict[str, Any]:
    """The code that runs: package version, git commit, whether the tree was dirty, and when it
    was, the SHA256 of the uncommitted diff and of the untracked files (``code_identity``)."""
    state = git_tree_state(Path(repo) if repo else Path(__file__).resolve().parent)
    commit, diff, untracked = state if state is not None else ("", None, None)
    return code_identity(__version__, commit, diff, untracked)


def provenance(
    inputs: Iterable[str | Path], config: Any, known: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The block: code version, config hash, SHA256 of each input (files or directories).

    ``known`` maps input paths (as given) to hashes already computed (e.g. by an audit that read
    every byte); the others are hashed here.
    """
    known = known or {}
    return {
        "code": code_version(),
        "config_sha256": config_hash(config),
        "inputs": {p: known.get(p) or sha256_path(p) for p in sorted(set(map(str, inputs)))},
    }


def write_result_json(
    path: str | Path,
    result: Mapping[str, Any],
    inputs: Iterable[str | Path],
    config: Any,
    known: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Write ``result`` with its ``provenance`` block (pretty, key-sorted JSON); return it."""
    if "provenance" in result:
        raise ValueError(f"{path}: result already holds a 'provenance' key")
    block = provenance(inputs, config, known)
    body = {**result, "provenance": block}
    atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
    return block


def write_result_parquet(
    path: str | Path, table: Any, inputs: Iterable[str | Path], config: Any
) -> dict[str, Any]:
    """Write a ``pyarrow.Table`` with the block in its schema metadata; return the block."""
    import pyarrow.parquet as pq

    block = provenance(inputs, config)
    meta = dict(table.schema.metadata or {})
    meta[PARQUET_KEY] = json.dumps(block, sort_keys=True).encode()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table.replace_schema_metadata(meta), tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return block


def tex_provenance_line(block: dict[str, Any]) -> str:
    """The first line of a LaTeX result (no newline)."""
    return TEX_PREFIX + json.dumps(block, sort_keys=True, separators=(",", ":"))


def write_result_tex(
    path: str | Path, text: str, inputs: Iterable[str | Path], config: Any
) -> dict[str, Any]:
    """Write a LaTeX file whose first line is the provenance comment; return the block."""
    block = provenance(inputs, config)
    atomic_write_text(path, tex_provenance_line(block) + "\n" + text)
    return block


def read_provenance(path: str | Path) -> dict[str, Any] | None:
    """The block of a ``.json``, ``.parquet`` or ``.tex`` result; ``None`` when it has none.

    Raises ``ValueError`` naming the file when the file or its block cannot be parsed.
    """
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            raw = (pq.read_schema(path).metadata or {}).get(PARQUET_KEY)
            block = None if raw is None else json.loads(raw)
        elif path.suffix == ".tex":
            with open(path, encoding="utf-8") as fh:
                first = fh.readline().rstrip("\n")
            block = json.loads(first[len(TEX_PREFIX) :]) if first.startswith(TEX_PREFIX) else None
        else:
            body = json.loads(path.read_text(encoding="utf-8"))
            block = body.get("provenance") if isinstance(body, dict) else None
    except Exception as exc:  # OSError, JSON and pyarrow errors alike
        raise ValueError(f"{path}: cannot read its provenance block: {exc}") from None
    if block is None:
        return None
    inputs = block.get("inputs") if isinstance(block, dict) else None
    if not isinstance(inputs, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in inputs.items()
    ):
        raise ValueError(f"{path}: provenance block has no inputs map of path -> SHA256")
    return block
