"""The minibugs action language: small and strictly parsed.

One action per assistant turn::

    edit <path>        followed by exactly two lines, marked like a diff: the old fragment,
    - <old fragment>   which must occur exactly once in the file, and its replacement (which
    + <new fragment>   may be empty: the line is then "+ ")
    edit <path>:<n>    the same, anchored to line n: the old fragment must occur exactly once
    - <old fragment>   in that line (so it can be as short as one token; the environment with
    + <new fragment>   ``agent.numbered_lines`` shows each line's number)
    try <k>            apply candidate fix k of the list the environment shows with
                       ``agent.candidates`` (agent/candidates.py), undoing an earlier try
                       (with ``agent.try_scope: function``, an earlier try at its function)
    run                run the tests on the current tree
    submit             end the episode with the current tree

Nothing has to be recalled: the path, the line number and the old fragment are copied from what
is on screen, and each line's first token says which line it is. Anything else (unknown verb,
wrong number of lines, a missing "- "/"+ " mark, trailing text) is a format error (METHOD §4):
the turn is recorded, the tree is unchanged, the episode goes on. A fragment that parses but
does not occur exactly once (in the file, or in the named line) is no format error: the tree is
unchanged and the observation says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

_EDIT = re.compile(r"edit (?P<path>[A-Za-z0-9_./-]+\.py)(?::(?P<line>[1-9][0-9]{0,5}))?")
OLD_MARK, NEW_MARK = "- ", "+ "
_TRY = re.compile(r"try (?P<k>[1-9][0-9]{0,3})")
_TOKEN = re.compile(r"\w+|[-+*/%<>=!&|^~@]+|\s+|.")


@dataclass(frozen=True)
class Action:
    """A parsed action."""

    kind: Literal["edit", "try", "run", "submit"]
    path: str = ""
    old: str = ""
    new: str = ""
    line: int = 0
    """The line (1-based) an edit is anchored to; 0: the old fragment is unique in the file."""
    candidate: int = 0
    """The candidate fix (from 1) a ``try`` applies."""


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
        return Action(kind=cast(Literal["run", "submit"], head))
    tried = _TRY.fullmatch(head)
    if tried is not None:
        if len(lines) > 2 or (len(lines) == 2 and lines[1] != ""):
            raise FormatError("'try' takes no further lines")
        return Action(kind="try", candidate=int(tried["k"]))
    match = _EDIT.fullmatch(head)
    if match is None:
        raise FormatError(f"unknown action: {head[:40]!r}")
    if len(lines) != 3:
        raise FormatError(f"'edit' needs exactly two lines (old, new), got {len(lines) - 1}")
    if not lines[1].startswith(OLD_MARK):
        raise FormatError(f"the old fragment's line must start with {OLD_MARK!r}")
    if not lines[2].startswith(NEW_MARK):
        raise FormatError(f"the new fragment's line must start with {NEW_MARK!r}")
    old, new = lines[1][len(OLD_MARK) :], lines[2][len(NEW_MARK) :]
    if not old:
        raise FormatError("'edit' needs a non-empty old fragment")
    return Action("edit", match["path"], old, new, int(match["line"] or 0))


def format_action(action: Action) -> str:
    """The canonical text of an action (what the scripted experts write)."""
    if action.kind == "edit":
        where = f"{action.path}:{action.line}" if action.line else action.path
        return f"edit {where}\n{OLD_MARK}{action.old}\n{NEW_MARK}{action.new}"
    if action.kind == "try":
        return f"try {action.candidate}"
    return action.kind


def occurrences(text: str, fragment: str) -> int:
    """How many times ``fragment`` occurs in ``text`` (overlaps counted)."""
    count, at = 0, text.find(fragment)
    while at >= 0:
        count += 1
        at = text.find(fragment, at + 1)
    return count


def apply_edit(text: str, old: str, new: str) -> tuple[str | None, str]:
    """``text`` with the one occurrence of ``old`` replaced by ``new``, or (None, why not)."""
    n = occurrences(text, old)
    if n == 0:
        return None, "the old text does not occur"
    if n > 1:
        return None, f"the old text occurs {n} times"
    at = text.find(old)
    return text[:at] + new + text[at + len(old) :], ""


def apply_action_edit(text: str, action: Action) -> tuple[str | None, str]:
    """``text`` after the edit ``action`` (anchored to its line when it names one), or
    (None, why not)."""
    if not action.line:
        return apply_edit(text, action.old, action.new)
    lines = text.split("\n")
    if action.line > len(lines):
        return None, f"there is no line {action.line}"
    edited, why = apply_edit(lines[action.line - 1], action.old, action.new)
    if edited is None:
        return None, f"{why} in line {action.line}"
    lines[action.line - 1] = edited
    return "\n".join(lines), ""


def numbered(text: str, first: int = 1) -> str:
    """``text`` with each line prefixed by its number (``first`` for the first line) and a
    colon: what an environment with numbered lines shows."""
    return "\n".join(f"{n}: {line}" for n, line in enumerate(text.split("\n"), first))


def minimal_fragment(
    text: str, offset: int, old_line: str, new_line: str
) -> tuple[str, str] | None:
    """The shortest token-aligned (old, new) fragments that turn ``old_line`` (starting at
    ``text[offset]``) into ``new_line``, with ``old`` occurring exactly once in ``text``.

    Tokens are words, runs of operator characters, single punctuation marks and blanks. The
    changed span is widened to whole tokens, then one token at a time (left, right, ...) until
    unique. None when even the whole line is not unique."""
    if old_line == new_line:
        return None
    start = 0
    while start < min(len(old_line), len(new_line)) and old_line[start] == new_line[start]:
        start += 1
    tail = 0
    while (
        tail < min(len(old_line), len(new_line)) - start
        and old_line[-1 - tail] == new_line[-1 - tail]
    ):
        tail += 1
    bounds = [m.start() for m in _TOKEN.finditer(old_line)] + [len(old_line)]
    lo = max(b for b in bounds if b <= start)
    hi = min(b for b in bounds if b >= len(old_line) - tail)
    if lo == hi:  # pure insertion: take the next token (or the previous one at the end)
        k = bounds.index(lo)
        if k + 1 < len(bounds) and not old_line[lo : bounds[k + 1]].isspace():
            hi = bounds[k + 1]
        elif k > 0:
            lo = bounds[k - 1]
        else:
            hi = bounds[min(k + 1, len(bounds) - 1)]
    indent = len(old_line) - len(old_line.lstrip())
    grow_left = True
    while True:
        old = old_line[lo:hi]
        if old and occurrences(text, old) == 1 and text.find(old) == offset + lo:
            return old, new_line[lo : len(new_line) - (len(old_line) - hi)]
        can_left, can_right = lo > indent, hi < len(old_line)
        if not can_left and not can_right:
            if lo > 0:  # last resort: the line with its indentation
                lo = 0
                continue
            return None
        if (grow_left and can_left) or not can_right:
            lo = _step_left(bounds, lo, old_line, indent)
        else:
            hi = _step_right(bounds, hi, old_line)
        grow_left = not grow_left


def line_fragment(text: str, offset: int, old_line: str, new_line: str) -> tuple[str, str] | None:
    """The whole changed line as (old, new) fragments, without its indentation when that is
    unique in ``text`` and with it otherwise; None when the line is not unique at all."""
    if old_line == new_line:
        return None
    indent = len(old_line) - len(old_line.lstrip())
    if new_line[:indent] != old_line[:indent]:
        indent = 0
    for lo in (indent, 0):
        old = old_line[lo:]
        if old and occurrences(text, old) == 1 and text.find(old) == offset + lo:
            return old, new_line[lo:]
    return None


def anchored_fragment(
    text: str, offset: int, old_line: str, new_line: str
) -> tuple[str, str] | None:
    """The shortest token-aligned (old, new) fragments unique within ``old_line`` itself, for
    an edit anchored to its line (``text`` and ``offset`` are not needed)."""
    return minimal_fragment(old_line, 0, old_line, new_line)


FRAGMENT_STYLES = {
    "minimal": minimal_fragment,
    "line": line_fragment,
    "anchored": anchored_fragment,
}
ANCHORED_STYLES = frozenset({"anchored"})
"""Fragment styles whose edits name their line (``edit <path>:<n>``)."""


def _step_left(bounds: list[int], lo: int, line: str, indent: int) -> int:
    """Move ``lo`` left past blanks and then one token."""
    k = bounds.index(lo)
    while k > 0 and bounds[k - 1] >= indent:
        k -= 1
        if not line[bounds[k] : bounds[k + 1]].isspace():
            break
    return bounds[k]


def _step_right(bounds: list[int], hi: int, line: str) -> int:
    """Move ``hi`` right past blanks and then one token."""
    k = bounds.index(hi)
    while k + 1 < len(bounds):
        k += 1
        if not line[bounds[k - 1] : bounds[k]].isspace():
            break
    return bounds[k]


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
