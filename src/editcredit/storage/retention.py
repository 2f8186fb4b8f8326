"""Retention of intermediate checkpoints (``training.keep_checkpoints: k``; docs/design.md).

With ``k > 0`` a run keeps the model and optimiser files of its endpoint, of every k-th segment
(the k-th, 2k-th, ... segment end) and of every checkpoint the plan evaluates
(``evaluation.diagnostic_steps``); the other segments lose ``model/*.safetensors`` (and a shard
index) and ``state/optimizer.pt`` once the next segment exists (no resume needs them) and their
audits are written (rule ``prune_segment``). The segment directory stays, with its identity
receipt, config, tokenizer, RNG and cursor state, rollouts, metrics and credit ledger, so the
DAG still sees every segment as built; ``runs/{run}/pruned/step_{N}.json`` records what was
removed, with each file's size and SHA256 from the segment's identity receipt.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from editcredit.io.atomic import atomic_write_text
from editcredit.io.identity import RECEIPT
from editcredit.layout import PRUNED

PRUNED_GLOBS = ("model/*.safetensors", "model/model.safetensors.index.json", "state/optimizer.pt")
"""The large files of a segment that retention removes (weights, shard index, optimiser)."""


def retained_steps(ends: Sequence[int], keep: int, protect: Iterable[int] = ()) -> list[int]:
    """Segment ends whose checkpoints stay: all when ``keep`` is 0; else every ``keep``-th
    segment end, the endpoint (the last end) and the ``protect``ed steps."""
    if keep < 0:
        raise ValueError(f"training.keep_checkpoints is {keep}; it must be 0 (keep all) or more")
    ends = list(ends)
    if keep == 0 or not ends:
        return ends
    kept = {e for i, e in enumerate(ends, start=1) if i % keep == 0}
    kept |= {ends[-1]} | set(protect)
    return [e for e in ends if e in kept]


def pruned_steps(ends: Sequence[int], keep: int, protect: Iterable[int] = ()) -> list[int]:
    """Segment ends whose model and optimiser files are removed (never the last one)."""
    kept = set(retained_steps(ends, keep, protect))
    return [e for e in ends if e not in kept]


class PruneError(RuntimeError):
    """A segment cannot be pruned (no identity receipt to record the removed files by), or a
    retention record cannot be read (``path``)."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


def prunable_files(segment: Path) -> list[Path]:
    """The segment's files that retention removes, sorted."""
    return sorted({p for g in PRUNED_GLOBS for p in segment.glob(g) if p.is_file()})


def prune_segment(segment: str | Path, record_path: str | Path, meta: dict[str, Any]) -> dict:
    """Remove ``segment``'s model and optimiser files; write ``record_path`` first.

    The record lists every file to go, with its size and its SHA256 from the segment's identity
    receipt (a file already gone, after an interrupted prune, keeps its receipt's entry), so the
    record never lists less than what is missing. Protected (read-only) directories are made
    writable for the removal only.
    """
    segment = Path(segment)
    receipt = segment / RECEIPT
    if not receipt.is_file():
        raise PruneError(f"{segment}: no {RECEIPT}; the removed files could not be recorded")
    hashes = json.loads(receipt.read_text(encoding="utf-8"))["files"]
    present = {p.relative_to(segment).as_posix(): p for p in prunable_files(segment)}
    globbed = {rel for rel in hashes if any(Path(rel).match(g) for g in PRUNED_GLOBS)}
    removed = []
    for rel in sorted(globbed | set(present)):
        if rel not in hashes:
            raise PruneError(f"{segment / rel}: not in {receipt}; refusing to remove it")
        size = present[rel].stat().st_size if rel in present else None
        removed.append({"path": rel, "sha256": hashes[rel], "bytes": size})
    record = {**meta, "segment": segment.as_posix(), "removed": removed}
    record["bytes_freed"] = sum(r["bytes"] or 0 for r in removed)
    atomic_write_text(record_path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    for path in present.values():
        with _writable(path.parent):
            path.unlink()
    return record


class _writable:
    """Make a directory writable by its owner for the block; restore its mode after."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.mode = stat.S_IMODE(directory.stat().st_mode)

    def __enter__(self) -> None:
        os.chmod(self.directory, self.mode | stat.S_IWUSR)

    def __exit__(self, *exc: object) -> None:
        os.chmod(self.directory, self.mode)


def removed_files(root: str | Path) -> dict[Path, str]:
    """Every file retention removed under ``root`` (its ``runs/{run}/pruned/step_{N}.json``
    records): absolute path -> SHA256 from the segment's identity receipt."""
    root = Path(os.path.abspath(root))
    out = {}
    for record_path in sorted(root.glob(PRUNED.format(run="*", step="*"))):
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            segment = root / record["segment"]
            for r in record["removed"]:
                out[Path(os.path.normpath(segment / r["path"]))] = r["sha256"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PruneError(
                f"{record_path}: not a readable retention record ({exc!r})", record_path
            ) from None
    return out
