"""The identity of the code that wrote a result: commit, and what the tree held beyond it.

A commit alone does not name the code when the tree is dirty. ``code_identity`` adds the SHA256
of the uncommitted changes to tracked files (``git diff --binary HEAD``: staged and unstaged
alike) and a digest over the untracked files git would commit (not ignored: ``git ls-files
--others --exclude-standard``), as ``(relative path, SHA256)`` pairs in path order. The same
commit, diff and untracked files give the same identity; keeping the diff (``git diff
--binary HEAD > x.patch``) and those files is enough to rebuild the code a dirty result names.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from editcredit.io.hashing import sha256_file

__all__ = ["DIFF_OPTIONS", "UNKNOWN", "code_identity", "git_tree_state"]

#: the commit of code that is not in a git checkout
UNKNOWN = "unknown"
#: options that fix the diff's bytes whatever the user's git configuration
DIFF_OPTIONS = (
    "--binary",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def code_identity(
    package_version: str,
    commit: str,
    diff: bytes | None,
    untracked: Sequence[tuple[str, str]] | None,
) -> dict[str, Any]:
    """The ``code`` block of a provenance block or identity receipt.

    ``diff``: ``git diff --binary HEAD`` output; ``untracked``: ``(path, SHA256)`` of each
    untracked, not-ignored file; both ``None`` when the code is not in a git checkout (then
    ``git_dirty`` is ``None``: unknown). The two hashes are ``None`` when there is nothing to
    hash.
    """
    if diff is None or untracked is None:
        return {
            "package_version": package_version,
            "git_commit": UNKNOWN,
            "git_dirty": None,
            "git_diff_sha256": None,
            "git_untracked_sha256": None,
            "git_untracked_files": None,
        }
    digest = hashlib.sha256()
    for rel, sha in sorted(untracked):
        digest.update(f"{rel}\0{sha}\n".encode())
    return {
        "package_version": package_version,
        "git_commit": commit,
        "git_dirty": bool(diff) or bool(untracked),
        "git_diff_sha256": hashlib.sha256(diff).hexdigest() if diff else None,
        "git_untracked_sha256": digest.hexdigest() if untracked else None,
        "git_untracked_files": len(untracked),
    }


def _git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout


def git_tree_state(
    repo: str | Path,
) -> tuple[str, bytes, list[tuple[str, str]]] | None:
    """``(commit, diff, untracked)`` of the checkout holding ``repo``; ``None`` outside one."""
    cwd = Path(repo)
    try:
        commit = _git(cwd, "rev-parse", "HEAD").decode().strip()
        top = Path(_git(cwd, "rev-parse", "--show-toplevel").decode().strip())
        diff = _git(top, "diff", "HEAD", *DIFF_OPTIONS)
        names = _git(top, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0")
    except (OSError, subprocess.CalledProcessError, UnicodeDecodeError):
        return None
    untracked = []
    for raw in filter(None, names):
        rel = raw.decode("utf-8", errors="surrogateescape")
        path = top / rel
        if path.is_file() and not path.is_symlink():
            untracked.append((rel, sha256_file(path)))
        elif path.is_symlink():  # a link is its target's name, not its target's bytes
            target = str(path.readlink()).encode("utf-8", errors="surrogateescape")
            untracked.append((rel, hashlib.sha256(b"symlink:" + target).hexdigest()))
    return commit, diff, untracked
