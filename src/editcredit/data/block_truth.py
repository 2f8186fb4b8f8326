"""The known truth of an edit block, read from the task's record alone (METHOD §3, "Known truth").

A generated task plants its bugs, so what an edit block did to them can be labelled without
grading: compare the block's files before and after it with the task's tree and its gold hunks.

- :func:`planted_bugs`: each planted bug of a task as a :class:`PlantedSite`: the top-level
  definitions its gold hunk changes, their code with the bug planted and with it fixed (as
  ``ast.dump``, so layout and comments do not count), and the FAIL_TO_PASS ids it alone fails.
  A multi-bug task's bugs come from ``Task.bugs``; a single-bug task's one bug from its gold
  ``patch``.
- :func:`observed_mutants`: what the suite generator observed for each single-bug task of a
  suite: the mutant's definitions and the tests it fails (the task's FAIL_TO_PASS, observed in
  the sandbox when the suite was generated).
- :func:`block_truth`: the label of a block from its paths' texts before and after it:

  - ``fix``: after the block a planted bug's definitions are the gold ones and before it they
    were not (the bug's index is in ``fixed_bugs``);
  - ``harmful``: the record says the block makes a test fail that passed before it: it plants
    a fixed bug again (that bug's FAIL_TO_PASS), or it writes a mutant the generator observed
    failing tests of this task's PASS_TO_PASS (:func:`observed_mutants`, optional);
  - ``other``: anything else (another line, another function, or a fix the record cannot
    recognise: a change that behaves like the gold hunk but is not its code).

  A block that fixes a bug and also breaks a known test is ``fix``; both facts stay on the
  record (``fixed_bugs``, ``broken_tests``).

Whether an arbitrary edit breaks a PASS_TO_PASS test cannot be decided without running the tests:
every tree the generator observed for a task passes its PASS_TO_PASS (the generator keeps only
such tasks), so ``harmful`` covers exactly the edits whose test outcomes some generator run
observed, and everything else is ``other`` (docs/method.md, "Known truth per block").

Pure functions of texts and task records: no sandbox, no grades.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import pyarrow as pa

from editcredit.data.task import Task

#: One row per labelled edit block of a rollout (METHOD §3, "Known truth per block"): what the
#: credit-vs-truth diagnostics read beside the ledger (``stats.credit_truth``); training writes it
#: (``rl.segment``, ``truth.parquet``).
TRUTH_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("step", pa.int32()),
        ("rollout_key", pa.string()),
        ("instance_id", pa.string()),
        ("block", pa.int16()),
        ("eligible", pa.bool_()),
        ("label", pa.string()),  # fix, other or harmful (LABELS, below)
        ("fixed_bugs", pa.string()),  # the planted bugs it fixed, comma-separated indices
        ("tokens", pa.int32()),  # the valid generated tokens of its turns
    ]
)

#: The labels of a block, in the order of the diagnostics' tables.
LABELS = ("fix", "other", "harmful")
FIX, OTHER, HARMFUL = LABELS
#: A text's state with respect to one planted bug.
PLANTED, FIXED, CHANGED = "planted", "fixed", "changed"

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_MODULE = "<module>"  # the statements of a module outside its top-level definitions


@dataclass(frozen=True)
class PlantedSite:
    """Where one planted bug is, and its code planted and fixed.

    Attributes:
        index: the bug's index in ``Task.bugs`` (0 for a single-bug task).
        path: the file its gold hunk changes.
        names: the top-level definitions that hunk changes (``<module>`` for the rest).
        planted: ``ast.dump`` of those definitions with the bug planted (the task's tree).
        fixed: ... with the bug's gold hunk applied.
        fail_to_pass: the FAIL_TO_PASS ids the bug alone makes fail.
    """

    index: int
    path: str
    names: tuple[str, ...]
    planted: tuple[str | None, ...]
    fixed: tuple[str | None, ...]
    fail_to_pass: tuple[str, ...]

    def state(self, text: str | None) -> str:
        """``planted``, ``fixed`` or ``changed``: the site's definitions in ``text``."""
        found = definitions(text, self.names)
        if found is None:
            return CHANGED
        if found == self.fixed:
            return FIXED
        return PLANTED if found == self.planted else CHANGED


@dataclass(frozen=True)
class ObservedMutant:
    """A mutant the suite generator ran: a single-bug task's definitions and the tests they fail.

    ``fixed`` holds the definitions of the seed code, so a mutant is matched only in a tree of
    the same seed module.
    """

    instance_id: str
    path: str
    names: tuple[str, ...]
    planted: tuple[str | None, ...]
    fixed: tuple[str | None, ...]
    fails: tuple[str, ...]


@dataclass(frozen=True)
class BlockTruth:
    """What an edit block did to the planted bugs, by the record (module docstring)."""

    label: str  # fix | other | harmful
    fixed_bugs: tuple[int, ...] = ()  # bugs whose gold code the block wrote
    replanted_bugs: tuple[int, ...] = ()  # bugs fixed before the block and planted after it
    broken_tests: tuple[str, ...] = ()  # tests the record says the block makes fail

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"unknown block label {self.label!r} (one of {', '.join(LABELS)})")


def definitions(text: str | None, names: Sequence[str]) -> tuple[str | None, ...] | None:
    """``ast.dump`` of each named top-level definition of ``text`` (None where absent); the
    name ``<module>`` stands for the module's other statements. None when ``text`` is absent
    or does not parse."""
    if text is None:
        return None
    found = _top_level(text)
    if found is None:
        return None
    return tuple(found.get(name) for name in names)


@functools.lru_cache(maxsize=512)
def _top_level(text: str) -> Mapping[str, str] | None:
    """Name -> ``ast.dump`` of each top-level definition of ``text`` and ``<module>`` -> the
    rest; None when it does not parse. Cached by text: a worker labels the same few texts (a
    task's tree, its candidates' trees) for every block of every rollout, each against every
    observed mutant of the suite."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    defs: dict[str, str] = {}
    rest: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = ast.dump(node)
        else:
            rest.append(node)
    defs[_MODULE] = ast.dump(ast.Module(body=rest, type_ignores=[]))
    return MappingProxyType(defs)


def changed_definitions(before: str, after: str) -> tuple[str, ...]:
    """The top-level definitions (and ``<module>``) whose code differs between two texts."""
    names = sorted(_names(before) | _names(after))
    old, new = definitions(before, names), definitions(after, names)
    if old is None or new is None:
        raise ValueError("a text of the planted file does not parse")
    return tuple(n for n, a, b in zip(names, old, new, strict=True) if a != b)


def _names(text: str) -> set[str]:
    found = _top_level(text)
    if found is None:
        ast.parse(text)  # raises what the text does not parse with
    assert found is not None
    return set(found)


def apply_patch(files: Mapping[str, str], patch: str) -> dict[str, str]:
    """``files`` with a unified diff of changed files applied (as ``diff_trees`` writes them);
    a hunk that does not match raises ValueError. New and deleted files are not supported."""
    out = dict(files)
    for path, text in _sections(patch):
        if path not in out:
            raise ValueError(f"the patch changes {path!r}, which the tree lacks")
        out[path] = _apply_hunks(out[path], text)
    return out


def _sections(patch: str) -> list[tuple[str, str]]:
    """(path, text) of each file section of a git-style diff of changed files."""
    sections: list[tuple[str, list[str]]] = []
    for line in patch.splitlines(keepends=True):
        header = _GIT_HEADER.match(line.rstrip("\n"))
        if header:
            if header[1] != header[2]:
                raise ValueError(f"a renaming patch ({header[1]} -> {header[2]}) is not supported")
            sections.append((header[1], []))
        elif not sections:
            raise ValueError("not a git-style diff: no 'diff --git' header")
        elif line.startswith(
            ("new file mode", "deleted file mode", "--- /dev/null", "+++ /dev/null")
        ):
            raise ValueError(f"a patch that adds or deletes {sections[-1][0]!r} is not supported")
        else:
            sections[-1][1].append(line)
    return [(path, "".join(lines)) for path, lines in sections]


def _apply_hunks(text: str, diff: str) -> str:
    old = text.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    in_hunk = False  # the file header's '---' and '+++' lines come before the first hunk
    for line in diff.splitlines(keepends=True):
        m = _HUNK.match(line)
        if m:
            start = int(m[1]) - 1 if m[2] != "0" else int(m[1])
            out.extend(old[cursor:start])
            cursor, in_hunk = start, True
            continue
        if not in_hunk:
            continue
        tag, body = line[:1], line[1:]
        if tag == "\\" and out:  # "\ No newline at end of file": the line before has none
            out[-1] = out[-1].rstrip("\n")
        elif tag in (" ", "-"):
            if cursor >= len(old) or old[cursor].rstrip("\n") != body.rstrip("\n"):
                raise ValueError(f"the patch does not match line {cursor + 1}")
            if tag == " ":
                out.append(old[cursor])
            cursor += 1
        elif tag == "+":
            out.append(body)
    out.extend(old[cursor:])
    return "".join(out)


def _gold_path(patch: str) -> str:
    sections = _sections(patch)
    if len(sections) != 1:
        raise ValueError("a planted bug's gold hunk must change exactly one existing file")
    return sections[0][0]


def _site(task_files: Mapping[str, str], patch: str) -> tuple[str, tuple[str, ...], tuple, tuple]:
    path = _gold_path(patch)
    planted_text = task_files[path]
    fixed_text = apply_patch({path: planted_text}, patch)[path]
    names = changed_definitions(planted_text, fixed_text)
    if not names:
        raise ValueError(f"the gold hunk of {path!r} changes no code")
    planted, fixed = definitions(planted_text, names), definitions(fixed_text, names)
    assert planted is not None and fixed is not None  # changed_definitions parsed both
    return path, names, planted, fixed


def has_planted_truth(task: Task) -> bool:
    """Whether the task's record says where its bugs are: an inline tree and a gold patch of
    one existing file per bug (generated suites; not a task of an image)."""
    if task.files is None:
        return False
    try:
        planted_bugs(task)
    except (ValueError, KeyError, SyntaxError):
        return False
    return True


def planted_bugs(task: Task) -> tuple[PlantedSite, ...]:
    """The planted bugs of a task with an inline tree: ``Task.bugs`` of a multi-bug task, the
    gold ``patch`` of a single-bug one. Raises ValueError for a task without an inline tree or
    whose gold hunks the record cannot place."""
    if task.files is None:
        raise ValueError(f"{task.instance_id}: no inline tree, so no planted truth")
    if task.bugs is None:
        patches = [(task.patch, tuple(task.FAIL_TO_PASS))]
    else:
        patches = [(b.patch, tuple(b.FAIL_TO_PASS)) for b in task.bugs]
    sites = []
    for index, (patch, f2p) in enumerate(patches):
        path, names, planted, fixed = _site(task.files, patch)
        sites.append(PlantedSite(index, path, names, planted, fixed, f2p))
    return tuple(sites)


def observed_mutants(tasks: Iterable[Task]) -> tuple[ObservedMutant, ...]:
    """The mutants of the suite's single-bug tasks (those with planted truth), each with the
    tests the generator observed it failing: the task's FAIL_TO_PASS (every other test of the
    module passed in that run)."""
    out = []
    for task in tasks:
        if task.bugs is not None or not has_planted_truth(task):
            continue
        (site,) = planted_bugs(task)
        out.append(
            ObservedMutant(
                task.instance_id, site.path, site.names, site.planted, site.fixed, site.fail_to_pass
            )
        )
    return tuple(out)


def block_truth(
    task: Task,
    before: Mapping[str, str | None],
    after: Mapping[str, str | None],
    mutants: Sequence[ObservedMutant] = (),
) -> BlockTruth:
    """The label of one edit block of an episode of ``task`` (module docstring).

    Args:
        task: a task with planted truth (:func:`has_planted_truth`).
        before: path -> text just before the block, for each of the block's paths (None:
            absent).
        after: path -> text just after it, for the same paths (None: deleted).
        mutants: what the generator observed for the suite's single-bug tasks
            (:func:`observed_mutants`); without them ``harmful`` covers only replanted bugs.
    """
    if set(before) != set(after):
        raise ValueError(f"before {sorted(before)} and after {sorted(after)} name other paths")
    fixed: list[int] = []
    replanted: list[int] = []
    broken: set[str] = set()
    for site in planted_bugs(task):
        if site.path not in after:
            continue
        old, new = site.state(before[site.path]), site.state(after[site.path])
        if new == FIXED and old != FIXED:
            fixed.append(site.index)
        if old == FIXED and new == PLANTED:
            replanted.append(site.index)
            broken.update(site.fail_to_pass)
    gold = apply_patch(task.files or {}, task.patch)
    p2p = set(task.PASS_TO_PASS)
    for mutant in mutants:
        if mutant.path not in after or definitions(gold.get(mutant.path), mutant.names) != (
            mutant.fixed
        ):
            continue  # another seed module
        was = definitions(before[mutant.path], mutant.names)
        now = definitions(after[mutant.path], mutant.names)
        if now == mutant.planted and was != mutant.planted:
            broken.update(p2p.intersection(mutant.fails))
    label = FIX if fixed else HARMFUL if broken else OTHER
    return BlockTruth(label, tuple(fixed), tuple(replanted), tuple(sorted(broken)))
