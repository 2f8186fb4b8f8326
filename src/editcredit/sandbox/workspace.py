"""Materialise a task's tree with a patch applied and its test files restored.

Inline tasks are written from their ``files``; image-based tasks start from a host copy of the
image's work tree (``base``: extracted once per image, without VCS metadata, see
``editcredit.sandbox.docker_backend.ImageTrees``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from editcredit.data.task import Task
from editcredit.sandbox.patches import PatchFormatError, partition_patch
from editcredit.sandbox.runners import protected_files


class TaskTreeError(RuntimeError):
    """The frozen task itself cannot be materialised (a defect of the task, not the patch)."""


@dataclass(frozen=True)
class PatchOutcome:
    """What happened to the patch while the workspace was built."""

    applied: bool
    error: str = ""
    dropped_paths: list[str] = field(default_factory=list)


def write_tree(files: dict[str, str], root: Path) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def git_apply(patch: str, root: Path) -> str:
    """Apply a diff under root with git (no repository discovery); return '' or the error."""
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False, encoding="utf-8") as fh:
        fh.write(patch)
        patch_file = fh.name
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CEILING_DIRECTORIES": str(root.parent),
        "HOME": str(root.parent),
        "LC_ALL": "C",
    }
    try:
        proc = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-p1", patch_file],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.unlink(patch_file)
    if proc.returncode == 0:
        return ""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return lines[0] if lines else f"git apply exited with {proc.returncode}"


def _symlinks_under(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path.is_symlink():
                found.append(str(path.relative_to(root)))
    return sorted(found)


def _partition(task: Task, patch: str) -> tuple[str, list[str]] | PatchOutcome:
    """The patch without protected sections and the dropped paths, or the format failure."""
    if not patch.strip():
        return "", []
    try:
        return partition_patch(patch, [*task.test_paths, *protected_files(task)])
    except PatchFormatError as exc:
        return PatchOutcome(applied=False, error=str(exc))


def materialize(task: Task, patch: str, root: Path) -> PatchOutcome:
    """Build the workspace for grading ``patch`` on ``task`` under ``root`` (an empty dir).

    Sections of the patch that touch test paths, conftest.py, pytest configuration,
    interpreter start-up hooks or the task's runner files (``sandbox.runners``) are dropped
    and listed; the test files are then restored from
    the frozen task and its test_patch applied. A patch that does not apply, or that creates a
    symlink, leaves ``applied=False`` with the reason.
    """
    if task.files is None:
        raise TaskTreeError(f"{task.instance_id}: image-based tasks are materialised in-image")
    write_tree(task.files, root)
    parts = _partition(task, patch)
    if isinstance(parts, PatchOutcome):
        return parts
    kept, dropped = parts
    if kept:
        error = git_apply(kept, root)
        if error:
            return PatchOutcome(applied=False, error=error, dropped_paths=dropped)
    links = _symlinks_under(root)
    if links:
        return PatchOutcome(False, f"patch creates symlinks: {links}", dropped)
    for rel in task.test_paths:
        if rel in task.files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(task.files[rel], encoding="utf-8")
    _apply_test_patch(task, root)
    return PatchOutcome(applied=True, dropped_paths=dropped)


def materialize_from_base(task: Task, patch: str, root: Path, base: Path) -> PatchOutcome:
    """Like :func:`materialize` for an image-based task whose base tree is the directory ``base``.

    ``base`` is copied to ``root`` (symlinks kept as links), the kept part of the patch applied,
    symlinks the patch introduces rejected, and every test path restored from ``base`` (removed
    where the base has none) before the test_patch is applied.
    """
    shutil.copytree(base, root, symlinks=True, dirs_exist_ok=True)
    parts = _partition(task, patch)
    if isinstance(parts, PatchOutcome):
        return parts
    kept, dropped = parts
    if kept:
        error = git_apply(kept, root)
        if error:
            return PatchOutcome(applied=False, error=error, dropped_paths=dropped)
    new_links = sorted(set(_symlinks_under(root)) - set(_symlinks_under(base)))
    if new_links:
        return PatchOutcome(False, f"patch creates symlinks: {new_links}", dropped)
    for rel in task.test_paths:
        _restore_path(base / rel, root / rel)
    _apply_test_patch(task, root)
    return PatchOutcome(applied=True, dropped_paths=dropped)


def _restore_path(source: Path, target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    if source.exists() or source.is_symlink():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def _apply_test_patch(task: Task, root: Path) -> None:
    if task.test_patch:
        error = git_apply(task.test_patch, root)
        if error:
            raise TaskTreeError(f"{task.instance_id}: test_patch does not apply: {error}")
