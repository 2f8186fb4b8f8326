"""One-line edits of a tree and the unified diffs that make them (pure functions)."""

from __future__ import annotations

import difflib

from editcredit.conformance.pins import Edit


class EditError(ValueError):
    """An edit does not fit the file it names."""


def apply_edit(text: str, edit: Edit) -> str:
    """``text`` with the one line equal to ``edit.old`` (leading spaces included) replaced."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == edit.old]
    if len(hits) != 1:
        raise EditError(f"{edit.path}: the line {edit.old!r} occurs {len(hits)} times, not once")
    i = hits[0]
    ending = lines[i][len(edit.old) :]
    lines[i] = edit.new + (ending or "")
    return "".join(lines)


def edit_diff(text: str, edit: Edit) -> str:
    """The unified diff (``a/`` and ``b/`` prefixes, 3 lines of context) of ``edit``."""
    after = apply_edit(text, edit)
    diff = difflib.unified_diff(
        text.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{edit.path}",
        tofile=f"b/{edit.path}",
    )
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff
    )
    return f"diff --git a/{edit.path} b/{edit.path}\n" + out
