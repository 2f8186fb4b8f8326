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

With ``agent.try_scope: function`` a try is scoped to its *location*, the function it is in: the
list covers every seed function of the task (each bug's function of a multi-bug task, in the order
of ``meta.seed_functions``, numbered on from one function to the next) and ``try <k>`` sets the
lines of candidate k's function to the task's text with the candidate applied, leaving every
other line as it is (:func:`tried_at_location`): a try replaces only earlier tries at its
function, so fixes of different functions accumulate. Edits and tries replace single lines, so a
function keeps its lines throughout an episode.

Pure functions: the list is a function of the task's tree and its seed functions alone, so a
recorded ``try`` replays exactly (stopping/points.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from editcredit.agent.actions import anchored_fragment
from editcredit.agent.edit_blocks import LineRegions
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
    function: str = ""
    """The candidate's location: the function it is in (set by ``every_function`` lists)."""
    span: tuple[int, int] = (0, 0)
    """The first and last line (1-based) of that function in the task's tree."""


#: The values of ``agent.try_scope``: a try replaces the whole file's earlier try ('file'), or
#: only earlier tries at its function ('function').
TRY_SCOPES = ("file", "function")


def seed_functions(task: Task) -> list[tuple[str, str]]:
    """(path, function) of every seed function of ``task``: each bug's function of a multi-bug
    task (``meta.seed_functions``), else the one ``meta.seed_function``; empty when none."""
    names = task.meta.get("seed_functions") or (
        [task.meta["seed_function"]] if task.meta.get("seed_function") else []
    )
    out = []
    for name in names:
        module, _, function = str(name).partition(".")
        if function:
            out.append((f"{module}.py", function))
    return out


def candidate_fixes(task: Task, every_function: bool = False) -> list[Candidate]:
    """The numbered candidates of ``task``'s seed function, on its original tree; empty when
    the task names no seed function or its file is not in the tree. With ``every_function``
    (``agent.try_scope: function``): the candidates of every seed function, numbered on in the
    order of :func:`seed_functions`, each with its location."""
    from editcredit.agent.search_expert import UNNEGATE, reversal_candidates, seed_location

    if not every_function:
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
    return located_candidates(task)


def listed_candidates(task: Task, try_scope: str) -> list[Candidate]:
    """The list the environment shows ``task`` under ``agent.try_scope`` (:data:`TRY_SCOPES`):
    the seed function's candidates ('file') or every seed function's with their locations
    ('function'). The environment and every replay of its ``try`` actions read this one."""
    if try_scope not in TRY_SCOPES:
        raise ValueError(f"try_scope {try_scope!r} is not one of {TRY_SCOPES}")
    return candidate_fixes(task, try_scope == "function")


def located_candidates(task: Task) -> list[Candidate]:
    """The candidates of every seed function of ``task`` with their locations (see
    :func:`candidate_fixes`)."""
    from editcredit.agent.search_expert import UNNEGATE, reversal_candidates

    if task.files is None:
        return []
    kinds = {name: 1.0 for name in (*OPERATORS, UNNEGATE)}
    out: list[Candidate] = []
    for path, function in seed_functions(task):
        span = function_lines(task.files.get(path, ""), function)
        if span is None:
            continue
        for r in reversal_candidates(task.files[path], path, function, kinds):
            out.append(
                Candidate(len(out) + 1, r.kind, r.path, r.line, r.old, r.new, function, span)
            )
    return out


def function_lines(source: str, function: str) -> tuple[int, int] | None:
    """(first, last) line (1-based) of a top-level function of ``source``: its ``def`` line
    to the line before the next top-level statement (trailing blank lines excluded)."""
    from editcredit.agent.actions import function_span

    span = function_span(source, function)
    if span is None:
        return None
    first = source.count("\n", 0, span[0]) + 1
    body = source[span[0] : span[1]].rstrip("\n")
    return first, first + body.count("\n")


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


def tried_at_location(files: dict[str, str], current: str, candidate: Candidate) -> str:
    """The text of ``candidate.path`` after ``try`` under ``agent.try_scope: function``: the
    lines of the candidate's function as in the original ``files`` with the candidate applied,
    every other line as in ``current`` (the file now). Both texts have the same lines: edits
    and tries replace single lines."""
    first, last = candidate.span
    lines, original = current.split("\n"), files[candidate.path].split("\n")
    if not first or len(lines) != len(original):
        raise ValueError(f"candidate {candidate.number}: no location, or the file lost lines")
    lines[first - 1 : last] = original[first - 1 : last]
    lines[candidate.line - 1] = candidate.new
    return "\n".join(lines)


def location_regions(task: Task, store: Mapping[str, str]) -> LineRegions:
    """The regions by which an episode under ``agent.try_scope: function`` is cut into
    eligible blocks (agent/edit_blocks.py): every seed function's lines in the task's tree."""
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for path, function in seed_functions(task):
        span = function_lines((task.files or {}).get(path, ""), function)
        if span is not None:
            spans.setdefault(path, []).append((function, *span))
    return LineRegions({p: tuple(v) for p, v in spans.items()}, store)
