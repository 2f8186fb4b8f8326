"""Candidate fixes shown by the minibugs environment (``agent.candidates``).

With the option on, the environment lists, under the function on screen, every single-line
reversal of a planted bug that the project's mutation operators (and ``not x`` -> ``x``) can
write in that function, numbered in source order, each as the smallest fragment of its line
that changes (``3: @7 < -> <=``: candidate 3, line 7). The action ``try <k>`` sets the
function's file to the task's tree with candidate k applied and nothing else (an earlier try
is undone by the same turn). Nothing on the list says which candidate is right: about half
the holdout functions hold their fix among them (docs/base-policy.md), and only a test run
tells. The agent still has to choose, run, read the result and choose again; what it no longer
has to do is copy text it cannot read.

Pure functions: the list is a function of the task's tree and its seed function alone, so a
recorded ``try`` replays exactly (stopping/points.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from editcredit.agent.actions import anchored_fragment
from editcredit.data.mutations import OPERATORS
from editcredit.data.task import Task


@dataclass(frozen=True)
class Candidate:
    """Candidate ``number`` (from 1): line ``line`` of ``path`` becomes ``new``."""

    number: int
    kind: str
    path: str
    line: int
    old: str
    new: str


def candidate_fixes(task: Task) -> list[Candidate]:
    """The numbered candidates of ``task``'s seed function, on its original tree; empty when
    the task names no seed function or its file is not in the tree."""
    from editcredit.agent.search_expert import UNNEGATE, reversal_candidates, seed_location

    if task.files is None or not task.meta.get("seed_function"):
        return []
    path, function = seed_location(task)
    if path not in task.files:
        return []
    kinds = {name: 1.0 for name in (*OPERATORS, UNNEGATE)}
    found = reversal_candidates(task.files[path], path, function, kinds)
    return [
        Candidate(n, r.kind, r.path, r.line, r.old, r.new) for n, r in enumerate(found, start=1)
    ]


def candidate_line(candidate: Candidate) -> str:
    """How the list shows one candidate: its number, its line and the fragment that changes."""
    fragments = anchored_fragment("", 0, candidate.old, candidate.new)
    old, new = fragments if fragments else (candidate.old.strip(), candidate.new.strip())
    change = f"{old.strip()} -> {new.strip()}" if new.strip() else f"delete {old.strip()}"
    return f"{candidate.number}: @{candidate.line} {change}"


def candidate_listing(candidates: list[Candidate]) -> str:
    """The block the environment appends to its first observation."""
    if not candidates:
        return "candidate fixes: none"
    return "\n".join(["candidate fixes (try <k>):", *map(candidate_line, candidates)])


def tree_with(files: dict[str, str], candidate: Candidate) -> str:
    """The text of ``candidate.path`` in the original ``files`` with the candidate applied."""
    lines = files[candidate.path].split("\n")
    lines[candidate.line - 1] = candidate.new
    return "\n".join(lines)
