"""The minibugs action language: small and strictly parsed.

One action per assistant turn::

    edit <path> <function> followed by exactly two lines: a fragment of that function and
    <old fragment>         its replacement (the first occurrence inside the function's text
    <new fragment>         is replaced; the replacement may be empty)
    run                    run the tests on the current tree
    submit                 end the episode with the current tree

Anything else (unknown verb, wrong number of lines, trailing text) is a format error
(METHOD §4): the turn is recorded, the tree is unchanged, the episode goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_EDIT = re.compile(r"edit (?P<path>[A-Za-z0-9_./-]+\.py) (?P<function>[A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Action:
    """A parsed action."""

    kind: Literal["edit", "run", "submit"]
    path: str = ""
    function: str = ""
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
    return Action("edit", match["path"], match["function"], lines[1], lines[2])


def format_action(action: Action) -> str:
    """The canonical text of an action (what the scripted experts write)."""
    if action.kind == "edit":
        return f"edit {action.path} {action.function}\n{action.old}\n{action.new}"
    return action.kind


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def minimal_fragment(scope: str, offset: int, old_line: str, new_line: str) -> tuple[str, str]:
    """The shortest word-aligned (old, new) fragments that turn ``old_line`` into
    ``new_line`` when the first occurrence of ``old`` in ``scope`` is replaced, where the
    line starts at ``scope[offset]``. Widened one word at a time until that first
    occurrence is the one on this line."""
    start = 0
    while start < min(len(old_line), len(new_line)) and old_line[start] == new_line[start]:
        start += 1
    end_old, end_new = len(old_line), len(new_line)
    while end_old > start and end_new > start and old_line[end_old - 1] == new_line[end_new - 1]:
        end_old -= 1
        end_new -= 1
    while start > 0 and _is_word(old_line[start - 1]):
        start -= 1
    while end_old < len(old_line) and _is_word(old_line[end_old]):
        end_old += 1
        end_new += 1
    if start == end_old:  # pure insertion: anchor on the preceding character
        start = max(0, start - 1)
    grow_left = True
    while scope.find(old_line[start:end_old]) != offset + start:
        if (grow_left and start > 0) or end_old >= len(old_line):
            start -= 1
            while start > 0 and _is_word(old_line[start - 1]) and _is_word(old_line[start]):
                start -= 1
        else:
            end_old += 1
            end_new += 1
            while (
                end_old < len(old_line)
                and _is_word(old_line[end_old])
                and _is_word(old_line[end_old - 1])
            ):
                end_old += 1
                end_new += 1
        grow_left = not grow_left
        if start <= 0 and end_old >= len(old_line):
            start, end_old, end_new = 0, len(old_line), len(new_line)
            break
    return old_line[start:end_old], new_line[start:end_new]


def function_span(text: str, function: str) -> tuple[int, int] | None:
    """Character span of a top-level function's text: from its ``def`` line to the next
    top-level statement (textual, so it works on trees that no longer parse)."""
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    head = re.compile(rf"(async\s+)?def\s+{re.escape(function)}\s*\(")
    for i, line in enumerate(lines):
        if head.match(line):
            end = len(text)
            for j in range(i + 1, len(lines)):
                if lines[j] and not lines[j][0].isspace() and not lines[j].startswith("#"):
                    end = offsets[j]
                    break
            return offsets[i], end
    return None
