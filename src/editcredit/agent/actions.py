"""The minibugs action language: small and strictly parsed.

One action per assistant turn::

    edit <path>:<line>     followed by exactly two lines: a fragment of that line and its
    <old fragment>         replacement (the first occurrence on the line is replaced; the
    <new fragment>         replacement may be empty)
    run                    run the tests on the current tree
    submit                 end the episode with the current tree

Anything else (unknown verb, wrong number of lines, trailing text) is a format error
(METHOD §4): the turn is recorded, the tree is unchanged, the episode goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_EDIT = re.compile(r"edit (?P<path>[A-Za-z0-9_./-]+\.py):(?P<line>[1-9][0-9]{0,4})")


@dataclass(frozen=True)
class Action:
    """A parsed action."""

    kind: Literal["edit", "run", "submit"]
    path: str = ""
    line: int = 0
    old: str = ""
    new: str = ""


class FormatError(ValueError):
    """The assistant's text is not an action of the language."""


def parse_action(text: str) -> Action:
    """Parse one assistant turn; raise FormatError with the reason."""
    if not text.strip():
        raise FormatError("empty action")
    lines = text.split("\n")
    head = lines[0]
    if head in ("run", "submit"):
        if len(lines) > 2 or (len(lines) == 2 and lines[1] != ""):
            raise FormatError(f"'{head}' takes no further lines")
        return Action(kind=head)
    match = _EDIT.fullmatch(head)
    if match is None:
        raise FormatError(f"unknown action: {head[:40]!r}")
    if len(lines) != 3:
        raise FormatError(f"'edit' needs exactly two lines (old, new), got {len(lines) - 1}")
    if not lines[1]:
        raise FormatError("'edit' needs a non-empty old fragment")
    return Action("edit", match["path"], int(match["line"]), lines[1], lines[2])


def format_action(action: Action) -> str:
    """The canonical text of an action (what the scripted experts write)."""
    if action.kind == "edit":
        return f"edit {action.path}:{action.line}\n{action.old}\n{action.new}"
    return action.kind


def minimal_fragment(old_line: str, new_line: str) -> tuple[str, str]:
    """The shortest (old, new) fragments turning old_line into new_line when the first
    occurrence of ``old`` is replaced, widened to whole words where that keeps it unique."""
    start = 0
    while start < min(len(old_line), len(new_line)) and old_line[start] == new_line[start]:
        start += 1
    end_old, end_new = len(old_line), len(new_line)
    while end_old > start and end_new > start and old_line[end_old - 1] == new_line[end_new - 1]:
        end_old -= 1
        end_new -= 1
    while start > 0 and (old_line[start - 1].isalnum() or old_line[start - 1] == "_"):
        start -= 1
    while end_old < len(old_line) and (old_line[end_old].isalnum() or old_line[end_old] == "_"):
        end_old += 1
        end_new += 1
    if start == end_old:  # pure insertion: anchor on the preceding character
        start = max(0, start - 1)
    old, new = old_line[start:end_old], new_line[start:end_new]
    while old_line.find(old) != start:  # widen left until the first occurrence is ours
        start -= 1
        old, new = old_line[start:end_old], new_line[start:end_new]
    return old, new
