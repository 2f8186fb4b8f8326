"""Pinned bases: a base model directory checked against its identity receipt, and the receipt
against the config's pin, at the start of every job that reads the base (METHOD §11).

``import_model`` hard-links the user's directory into ``models/base/<name>/``, so an in-place
edit of the source is an edit of the base of every run. The check hashes every file of the base
at use time (once per job: a few GB take seconds to minutes, next to hours of training) and
compares them with the receipt ``identity.json``; ``models.<name>.receipt_sha256``, when set,
pins the receipt's file table (:func:`editcredit.io.identity.files_sha256`) too, so a receipt
rewritten to match an edited directory is refused as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from editcredit.io.identity import RECEIPT, file_hashes, files_sha256
from editcredit.io.provenance import sha256_file, sha256_path
from editcredit.layout import base_model_dir

__all__ = ["BaseDrifted", "changed_files", "check_base", "check_pin", "guard_base"]


class BaseDrifted(RuntimeError):
    """A base model directory differs from its receipt, or its receipt from the config's pin."""


def changed_files(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """``path (changed|missing|new)`` for every file whose hash differs, sorted by path."""
    out = []
    for path in sorted(set(expected) | set(actual)):
        if path not in actual:
            out.append(f"{path} (missing)")
        elif path not in expected:
            out.append(f"{path} (new)")
        elif actual[path] != expected[path]:
            out.append(f"{path} (changed)")
    return out


def check_pin(receipt: Mapping[str, Any], pin: str, receipt_path: str, where: str) -> str:
    """The receipt's file-table SHA256; raises when ``pin`` is set and differs."""
    table = files_sha256(dict(receipt["files"]))
    if pin and table != pin:
        raise BaseDrifted(
            f"{receipt_path}: its file table hashes to {table}, but config {where} pins {pin}; "
            "the base was re-imported or its receipt rewritten"
        )
    return table


def check_base(
    model_dir: str | Path,
    pin: str = "",
    where: str = "receipt_sha256",
    hasher: Callable[[Path], str] = sha256_file,
) -> dict[str, Any]:
    """Refuse a base whose files differ from its receipt (naming each file) or whose receipt
    differs from ``pin``; return what was checked (for the job's receipt), with the directory's
    provenance hash (``directory_sha256``, from the same reads: a job passes it on as known)."""
    directory = Path(model_dir)
    seen: dict[Path, str] = {}

    def once(p: Path) -> str:
        if p not in seen:
            seen[p] = hasher(p)
        return seen[p]

    path = directory / RECEIPT
    if not path.is_file():
        raise BaseDrifted(f"{path}: no identity receipt; a base is used only with its receipt")
    receipt = json.loads(path.read_text())
    table = check_pin(receipt, pin, str(path), where)
    changed = changed_files(receipt["files"], file_hashes(directory, once))
    if changed:
        raise BaseDrifted(
            f"{directory}: {', '.join(changed)} since its receipt {path}"
            + (f" (pinned by config {where})" if pin else "")
            + "; a base is frozen: a changed model is a new import under a new pin, never an "
            "in-place edit (a hard-linked import shares its files with the source directory)"
        )
    return {
        "model_dir": directory.as_posix(),
        "files": len(receipt["files"]),
        "files_sha256": table,
        "pinned": bool(pin),
        "directory_sha256": sha256_path(directory, once),
    }


def guard_base(model_dir: str | Path, models: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """:func:`check_base` when ``model_dir`` is ``models/base/<name>`` of a model in ``models``
    (config ``models``; its ``receipt_sha256`` the pin); None for any other directory."""
    for name, cfg in (models or {}).items():
        if Path(model_dir) == Path(base_model_dir(name)):
            pin = (cfg or {}).get("receipt_sha256") or ""
            return check_base(model_dir, pin, where=f"models.{name}.receipt_sha256")
    return None
