"""The checkout's sources, as a fresh clone holds them: what a test copies into its scratch
workflow or scans. Never what a pipeline run left in the checkout (results, models, runs,
generated tables and figures, the compiled paper, logs, the grading cache): those are ignored by
git, and a scratch copy that carried them would find its targets already built.

The files are git's: tracked ones, plus untracked ones git does not ignore (a new source not yet
added), less those deleted from the working tree."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class CheckoutError(RuntimeError):
    pass


def source_files(names: Iterable[str], root: str | Path = REPO) -> list[str]:
    """Every source file under each of ``names`` (files or directories, relative to ``root``),
    as sorted paths relative to ``root``. A name with no source file under it is an error."""
    root = Path(root)
    names = [str(name).rstrip("/") for name in names]
    if not names:
        return []
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *names],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise CheckoutError(
            f"{root}: git ls-files failed (a git checkout is needed): {proc.stderr}"
        )
    files = sorted({p for p in proc.stdout.split("\0") if p and (root / p).is_file()})
    for name in names:
        if not any(p == name or p.startswith(name + "/") for p in files):
            raise CheckoutError(f"{root}: no source file under {name!r}")
    return files


def copy_sources(names: Iterable[str], dst: str | Path, root: str | Path = REPO) -> Path:
    """Copy the source files under ``names`` from ``root`` into ``dst`` (same relative paths,
    modes kept); returns ``dst``."""
    dst = Path(dst)
    for rel in source_files(names, root):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(root, rel), target)
    return dst
