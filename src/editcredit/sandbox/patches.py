"""Unified diffs: split into per-file sections, make them from file trees, protect test paths."""

from __future__ import annotations

import base64
import difflib
import hashlib
import posixpath
import re
import zlib
from dataclasses import dataclass

PYTEST_CONFIG_FILES = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"}
)
STARTUP_HOOK_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
TEST_DIR_NAMES = frozenset({"test", "tests", "testing"})

_GIT_HEADER = re.compile(r"^diff --git a/(?P<a>\S+) b/(?P<b>\S+)$")
ZERO_OID = "0" * 40
LINK_MODE = "120000"


class PatchFormatError(ValueError):
    """The text is not a unified diff."""


@dataclass(frozen=True)
class FileSection:
    """The part of a diff that touches one file."""

    old_path: str | None  # None for a new file
    new_path: str | None  # None for a deleted file
    text: str

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in dict.fromkeys((self.old_path, self.new_path)) if p)


def split_patch(patch: str) -> list[FileSection]:
    """Split a unified diff into file sections; raise PatchFormatError if it is not one."""
    lines = patch.splitlines(keepends=True)
    starts: list[int] = []
    for i, line in enumerate(lines):
        if line.startswith("diff --git ") or (
            line.startswith("--- ")
            and i + 1 < len(lines)
            and lines[i + 1].startswith("+++ ")
            and not (starts and _in_git_header(lines, starts[-1], i))
        ):
            starts.append(i)
    if not starts:
        raise PatchFormatError("not a unified diff: no 'diff --git' or '---'/'+++' file header")
    sections = []
    for begin, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        chunk = lines[begin:end]
        old, new = _section_paths(chunk)
        if old is None and new is None:
            raise PatchFormatError(f"diff section without file paths: {chunk[0].strip()!r}")
        if not any(line.startswith("@@") for line in chunk) and not _is_git_metadata_only(chunk):
            raise PatchFormatError(f"diff section without hunks: {chunk[0].strip()!r}")
        sections.append(FileSection(old, new, "".join(chunk)))
    return sections


def _in_git_header(lines: list[str], start: int, i: int) -> bool:
    return all(not lines[j].startswith("@@") for j in range(start, i))


def _is_git_metadata_only(chunk: list[str]) -> bool:
    """A git section without text hunks: a mode change, a new or deleted empty file, a
    rename, or a binary patch."""
    return chunk[0].startswith("diff --git ") and any(
        line.startswith(
            ("new file mode", "deleted file mode", "rename from", "old mode", "GIT binary patch")
        )
        for line in chunk
    )


def _strip_prefix(raw: str) -> str | None:
    path = raw.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _section_paths(chunk: list[str]) -> tuple[str | None, str | None]:
    old = new = None
    seen_minus = seen_plus = False
    for line in chunk:
        if line.startswith("@@"):
            break
        if line.startswith("--- ") and not seen_minus:
            old, seen_minus = _strip_prefix(line[4:]), True
        elif line.startswith("+++ ") and not seen_plus:
            new, seen_plus = _strip_prefix(line[4:]), True
    if not (seen_minus or seen_plus):
        match = _GIT_HEADER.match(chunk[0].rstrip("\n"))
        if match:
            old, new = match["a"], match["b"]
            if any(line.startswith("new file mode") for line in chunk):
                old = None
            if any(line.startswith("deleted file mode") for line in chunk):
                new = None
    return old, new


def is_protected_path(path: str, test_paths: list[str]) -> bool:
    """Paths a patch may not change: tests, pytest configuration, interpreter start-up hooks."""
    norm = posixpath.normpath(path)
    name = posixpath.basename(norm)
    parts = norm.split("/")[:-1]
    return (
        norm in test_paths
        or name in PYTEST_CONFIG_FILES
        or name in STARTUP_HOOK_FILES
        or name.endswith(".pth")
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
        or any(part in TEST_DIR_NAMES for part in parts)
    )


def partition_patch(patch: str, test_paths: list[str]) -> tuple[str, list[str]]:
    """Return (the patch without protected sections, the sorted protected paths dropped)."""
    kept, dropped = [], set()
    for section in split_patch(patch):
        protected = [p for p in section.paths if is_protected_path(p, test_paths)]
        if protected:
            dropped.update(protected)
        else:
            kept.append(section.text)
    return "".join(kept), sorted(dropped)


def diff_trees(before: dict[str, str], after: dict[str, str]) -> str:
    """A git-style unified diff that turns ``before`` into ``after`` (sorted by path)."""
    out = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        header = f"diff --git a/{path} b/{path}\n"
        if old is None:
            header += "new file mode 100644\n"
        elif new is None:
            header += "deleted file mode 100644\n"
        body = difflib.unified_diff(
            _lines(old),
            _lines(new),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        )
        out.append(header + "".join(_terminate(body)))
    return "".join(out)


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines(keepends=True)


def _terminate(lines):
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n\\ No newline at end of file\n"


def git_blob_id(data: bytes) -> str:
    """git's object id of a blob holding ``data`` (SHA-1 of ``blob <size>\\0<data>``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _literal(data: bytes) -> str:
    """git's ``literal`` binary hunk: zlib data in base85 lines of up to 52 bytes."""
    packed = zlib.compress(data, 9)
    lines = [f"literal {len(data)}\n"]
    for i in range(0, len(packed), 52):
        chunk = packed[i : i + 52]
        n = len(chunk)
        prefix = chr(ord("A") + n - 1) if n <= 26 else chr(ord("a") + n - 27)
        lines.append(prefix + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return "".join(lines) + "\n"


def git_binary_section(
    path: str, old: tuple[str, str] | None, new: tuple[str, bytes] | None
) -> str:
    """The git section that turns ``old`` (mode, blob id; None: absent) into ``new`` (mode,
    bytes; None: deleted): mode lines, and the content as a binary patch with full index
    lines (``git apply`` checks them). Symbolic links are mode 120000 with the target as
    content. A pure mode change has no content part."""
    header = f"diff --git a/{path} b/{path}\n"
    if old is None and new is None:
        return ""
    if old is None:
        assert new is not None  # both None returned above
        header += f"new file mode {new[0]}\n"
    elif new is None:
        header += f"deleted file mode {old[0]}\n"
    elif old[0] != new[0]:
        header += f"old mode {old[0]}\nnew mode {new[0]}\n"
    old_oid = old[1] if old is not None else ZERO_OID
    new_oid = git_blob_id(new[1]) if new is not None else ZERO_OID
    if old_oid == new_oid:
        return header
    data = new[1] if new is not None else b""
    return f"{header}index {old_oid}..{new_oid}\nGIT binary patch\n{_literal(data)}"
