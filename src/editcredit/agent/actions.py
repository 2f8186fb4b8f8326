"""The minibugs action language: small and strictly parsed.

One action per assistant turn::

    replace <path>:<line>          followed by one line: the new text of that line
    run                            run the tests on the current tree
    submit                         end the episode with the current tree

Anything else (unknown verb, missing line, extra text, a line number out of range) is a format
error (METHOD §4): the turn is recorded, the tree is unchanged, the episode goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_REPLACE = re.compile(r"replace (?P<path>[^\s:]+):(?P<line>[1-9][0-9]{0,4})")


@dataclass(frozen=True)
class Action:
    """A parsed action."""

    kind: Literal["replace", "run", "submit"]
    path: str = ""
    line: int = 0
    text: str = ""


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
    match = _REPLACE.fullmatch(head)
    if match is None:
        raise FormatError(f"unknown action: {head[:40]!r}")
    if len(lines) != 2:
        raise FormatError(f"'replace' needs exactly one line of text, got {len(lines) - 1}")
    return Action("replace", match["path"], int(match["line"]), lines[1])


def format_action(action: Action) -> str:
    """The canonical text of an action (what the scripted experts write)."""
    if action.kind == "replace":
        return f"replace {action.path}:{action.line}\n{action.text}"
    return action.kind
