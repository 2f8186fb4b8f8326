"""Edit blocks of an agent episode, score-blind selection and the counterfactual tree (METHOD §2).

An episode is a sequence of assistant turns, each followed by an environment observation. After
every assistant turn the environment records which files that turn changed, as
``path -> (sha256 before or None if absent, sha256 after or None if deleted)``. From these records:

- :func:`edit_blocks` splits the episode into *edit blocks*: maximal runs of consecutive assistant
  turns that each changed at least one file, and marks each block eligible or not, with reasons.
- :func:`select_block` picks one eligible block by ``sha256(f"{rollout_key}:{index}")``. It takes
  no grade as input, so the selection is score-blind by construction.
- :func:`counterfactual_tree` is the final file tree with the selected block's paths restored to
  their state just before the block. It is not a new trajectory: only those paths change.

Conventions. Turn indices count assistant turns only, from 0. A turn absent from the records, or
present with no changes, changed nothing and breaks a run of editing turns. Paths are
repository-relative POSIX paths, as in the final tree. A path's recorded history must chain: each
change's ``before`` equals the ``after`` of the previous change of that path; a broken chain
raises :class:`ValueError` rather than producing a wrong counterfactual.

*Regions* (:class:`LineRegions`, used where a file holds several independent locations, as a
multi-bug task's module under ``agent.try_scope: function``): the "modified later" rule and the
counterfactual work on named line spans of a file (its functions) instead of whole paths, so two
blocks that edit different functions of one file can both be eligible, and the counterfactual
restores the selected block's spans alone. Without them (the default) every rule is by path.

Pure functions and frozen records only: no I/O, no randomness, no grades.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

TEST_DIR_NAMES = frozenset({"tests", "test"})


def _check_path(path: str) -> None:
    if not isinstance(path, str) or not path:
        raise ValueError(f"path must be a non-empty string, got {path!r}")
    if path.startswith("/") or posixpath.normpath(path) != path or path.split("/")[0] == "..":
        raise ValueError(f"path must be a normalised repository-relative POSIX path: {path!r}")


def _check_hash(value: str | None, what: str, path: str) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(f"{what} hash of {path!r} must be a non-empty string or None: {value!r}")


@dataclass(frozen=True)
class FileChange:
    """One file changed by one assistant turn.

    Attributes:
        path: repository-relative POSIX path.
        before: content hash just before the turn (None: the file was absent).
        after: content hash just after the turn (None: the file was deleted or is absent).

    ``before == after`` is rejected: a record that changes nothing is not a change.
    """

    path: str
    before: str | None
    after: str | None

    def __post_init__(self) -> None:
        _check_path(self.path)
        _check_hash(self.before, "before", self.path)
        _check_hash(self.after, "after", self.path)
        if self.before == self.after:
            raise ValueError(f"change of {self.path!r} has before == after ({self.before!r})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return {"path": self.path, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class TurnChanges:
    """The files changed by one assistant turn.

    Attributes:
        turn: index of the assistant turn (0-based, assistant turns only).
        changes: the files it changed, at most one record per path (may be empty).
    """

    turn: int
    changes: tuple[FileChange, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.turn, bool) or not isinstance(self.turn, int) or self.turn < 0:
            raise ValueError(f"turn must be a non-negative int, got {self.turn!r}")
        if not isinstance(self.changes, tuple):
            raise TypeError(f"changes must be a tuple of FileChange, got {type(self.changes)}")
        seen: set[str] = set()
        for change in self.changes:
            if not isinstance(change, FileChange):
                raise TypeError(f"turn {self.turn}: expected FileChange, got {change!r}")
            if change.path in seen:
                raise ValueError(f"turn {self.turn}: path {change.path!r} recorded twice")
            seen.add(change.path)

    @classmethod
    def from_mapping(
        cls, turn: int, changes: Mapping[str, tuple[str | None, str | None]]
    ) -> TurnChanges:
        """Build from the environment's record ``path -> (before, after)`` (paths sorted)."""
        return cls(
            turn=turn,
            changes=tuple(FileChange(p, changes[p][0], changes[p][1]) for p in sorted(changes)),
        )

    @property
    def paths(self) -> tuple[str, ...]:
        """The changed paths, sorted."""
        return tuple(sorted(c.path for c in self.changes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return {"turn": self.turn, "changes": [c.to_dict() for c in self.changes]}


@dataclass(frozen=True)
class EditBlock:
    """A maximal run of consecutive assistant turns that each changed at least one file.

    Attributes:
        index: position of the block among all blocks of the episode (0-based, eligible or not);
            the selection hash uses it.
        turns: the assistant turns of the block, consecutive and increasing.
        paths: every path changed by those turns, sorted.
        eligible: True iff ``reasons`` is empty.
        reasons: why the block is ineligible, in the order test paths, net effect, later edits.
    """

    index: int
    turns: tuple[int, ...]
    paths: tuple[str, ...]
    eligible: bool
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.index, bool) or not isinstance(self.index, int) or self.index < 0:
            raise ValueError(f"index must be a non-negative int, got {self.index!r}")
        if not self.turns or any(b != a + 1 for a, b in pairwise(self.turns)):
            raise ValueError(f"block turns must be non-empty and consecutive: {self.turns!r}")
        if not self.paths or list(self.paths) != sorted(set(self.paths)):
            raise ValueError(f"block paths must be non-empty, sorted and unique: {self.paths!r}")
        if self.eligible != (not self.reasons):
            raise ValueError(
                f"block {self.index}: eligible={self.eligible} contradicts reasons={self.reasons!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return {
            "index": self.index,
            "turns": list(self.turns),
            "paths": list(self.paths),
            "eligible": self.eligible,
            "reasons": list(self.reasons),
        }


def is_default_test_path(path: str) -> bool:
    """True for ``test_*.py``, ``*_test.py``, ``conftest.py``, or a file under a ``tests/`` or
    ``test/`` directory (at any depth)."""
    norm = posixpath.normpath(path)
    parts = norm.split("/")
    name = parts[-1]
    return (
        (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in TEST_DIR_NAMES for part in parts[:-1])
    )


def _validated(turns: Sequence[TurnChanges]) -> list[TurnChanges]:
    """Check turn order and the per-path hash chain; return the turns as a list."""
    turns = list(turns)
    for prev, cur in pairwise(turns):
        if cur.turn <= prev.turn:
            raise ValueError(
                f"turns must be strictly increasing: turn {cur.turn} after turn {prev.turn}"
            )
    last_after: dict[str, str | None] = {}
    for tc in turns:
        for change in tc.changes:
            if change.path in last_after and last_after[change.path] != change.before:
                raise ValueError(
                    f"broken history of {change.path!r} at turn {tc.turn}: before="
                    f"{change.before!r} but the previous change left {last_after[change.path]!r}"
                )
            last_after[change.path] = change.after
    return turns


def _runs(turns: list[TurnChanges]) -> list[list[TurnChanges]]:
    """Maximal runs of consecutive turn indices that each have at least one change."""
    runs: list[list[TurnChanges]] = []
    for tc in turns:
        if not tc.changes:
            continue
        if runs and runs[-1][-1].turn + 1 == tc.turn:
            runs[-1].append(tc)
        else:
            runs.append([tc])
    return runs


def _net_states(run: Sequence[TurnChanges]) -> dict[str, tuple[str | None, str | None]]:
    """path -> (state just before the run's first turn, state just after its last turn)."""
    states: dict[str, tuple[str | None, str | None]] = {}
    for tc in run:
        for change in tc.changes:
            first = states[change.path][0] if change.path in states else change.before
            states[change.path] = (first, change.after)
    return states


def edit_blocks(
    turns: Sequence[TurnChanges],
    is_test_path: Callable[[str], bool],
    regions: LineRegions | None = None,
) -> list[EditBlock]:
    """Split an episode's change records into edit blocks and judge each one's eligibility.

    A block is a maximal run of consecutive assistant turns that each changed at least one file.
    It is eligible iff all of:

    - it touches no test path (reason ``"touches test path: <p>"``, one per path);
    - its net effect is non-zero: for at least one path the state just before the block differs
      from the state just after it (reason ``"no net effect"``);
    - none of its paths is changed by a turn after the block (reason
      ``"path modified later: <p>"``, one per path).

    All applicable reasons are listed, in that order, paths sorted within each kind.

    Args:
        turns: change records, one per assistant turn, with strictly increasing ``turn``; a turn
            may be missing (it changed nothing).
        is_test_path: which paths count as tests, e.g. :func:`is_default_test_path` or a
            task-specific predicate.
        regions: with them, the later-edit rule is by region: none of the regions the block
            changed is changed by a later turn (reason ``"region modified later: <r>"``).

    Raises:
        ValueError: turns out of order, or a path's before/after hashes do not chain.
    """
    ordered = _validated(turns)
    runs = _runs(ordered)
    blocks: list[EditBlock] = []
    for index, run in enumerate(runs):
        states = _net_states(run)
        paths = tuple(sorted(states))
        last_turn = run[-1].turn
        later = {c.path for tc in ordered if tc.turn > last_turn for c in tc.changes}
        reasons = [f"touches test path: {p}" for p in paths if is_test_path(p)]
        if all(before == after for before, after in states.values()):
            reasons.append("no net effect")
        if regions is None:
            reasons.extend(f"path modified later: {p}" for p in paths if p in later)
        else:
            mine = regions.of_turns(run)
            after_block = regions.of_turns([tc for tc in ordered if tc.turn > last_turn])
            reasons.extend(
                f"region modified later: {r}" for r in sorted(mine) if overlaps(r, after_block)
            )
        blocks.append(
            EditBlock(
                index=index,
                turns=tuple(tc.turn for tc in run),
                paths=paths,
                eligible=not reasons,
                reasons=tuple(reasons),
            )
        )
    return blocks


def selection_hash(rollout_key: str, index: int) -> str:
    """``sha256(f"{rollout_key}:{index}")`` as a hex digest: the selection order of a block."""
    return hashlib.sha256(f"{rollout_key}:{index}".encode()).hexdigest()


def select_block(blocks: Sequence[EditBlock], rollout_key: str) -> EditBlock | None:
    """The eligible block with the smallest :func:`selection_hash`, or None if none is eligible.

    Score-blind by construction: the only inputs are the blocks and the rollout's identity
    (``rollout_key``: run, step, task, sample index).
    """
    if not isinstance(rollout_key, str) or not rollout_key:
        raise ValueError(f"rollout_key must be a non-empty string, got {rollout_key!r}")
    eligible = [b for b in blocks if b.eligible]
    if not eligible:
        return None
    return min(eligible, key=lambda b: (selection_hash(rollout_key, b.index), b.index))


def _block_run(block: EditBlock, turns: Sequence[TurnChanges]) -> list[TurnChanges]:
    by_turn = {tc.turn: tc for tc in _validated(turns)}
    missing = [t for t in block.turns if t not in by_turn]
    if missing:
        raise ValueError(f"block {block.index}: turns {missing} are not in the records")
    run = [by_turn[t] for t in block.turns]
    recorded = {c.path for tc in run for c in tc.changes}
    if recorded != set(block.paths):
        raise ValueError(
            f"block {block.index}: paths {list(block.paths)} do not match the records of its "
            f"turns {sorted(recorded)}"
        )
    return run


def block_state_before(block: EditBlock, turns: Sequence[TurnChanges]) -> dict[str, str | None]:
    """For each path of ``block``, its content hash just before the block's first turn.

    None means the file was absent. Keys are the block's paths, sorted.

    Raises:
        ValueError: the block does not match the records (turns missing, paths differ).
    """
    states = _net_states(_block_run(block, turns))
    return {p: states[p][0] for p in block.paths}


def counterfactual_tree(
    final_tree: Mapping[str, str],
    block: EditBlock,
    turns: Sequence[TurnChanges],
    store: Mapping[str, str],
    regions: LineRegions | None = None,
) -> dict[str, str]:
    """The final tree with ``block``'s paths restored to their state just before the block.

    A path absent before the block is removed; every other path keeps its final content
    unchanged. This is an edited artifact, not a new trajectory.

    Args:
        final_tree: path -> text of the episode's final file tree (not modified).
        block: an eligible block (for an ineligible one a later edit could be wiped).
        turns: the episode's change records.
        store: content hash -> text of every version the environment saw.
        regions: with them (the regions ``block``'s eligibility was judged by), only the lines
            of the regions the block changed are restored; the rest of each file stays final.

    Raises:
        ValueError: the block is ineligible or does not match the records.
        KeyError: the store lacks a version needed for the restore (the message names the hash).
    """
    if not block.eligible:
        raise ValueError(f"block {block.index} is not eligible: {'; '.join(block.reasons)}")
    tree = dict(final_tree)
    changed = regions.of_turns(_block_run(block, turns)) if regions is not None else frozenset()
    for path, digest in block_state_before(block, turns).items():
        if digest is None:
            tree.pop(path, None)
        elif digest not in store:
            raise KeyError(f"content store lacks version {digest} (state of {path!r} before block)")
        elif regions is not None and path in tree and path not in changed:
            tree[path] = regions.restore(path, tree[path], store[digest], changed)
        else:
            tree[path] = store[digest]
    return tree


def credited_turns(block: EditBlock) -> tuple[int, ...]:
    """The assistant turns that produced ``block``: those that receive M's and E's credit."""
    return block.turns


def overlaps(region: str, others: frozenset[str]) -> bool:
    """Does ``region`` share lines with one of ``others``? A region is a path (the whole file)
    or ``<path>::<name>`` (a named span of it); a path overlaps every region of its file."""
    path = region.split("::", 1)[0]
    return (
        region in others
        or path in others
        or (region == path and any(o.split("::", 1)[0] == path for o in others))
    )


def changed_lines(before: str, after: str) -> tuple[int, ...] | None:
    """The lines (1-based) that differ between two texts of equally many lines; None when the
    number of lines differs."""
    a, b = before.split("\n"), after.split("\n")
    if len(a) != len(b):
        return None
    return tuple(n for n, (x, y) in enumerate(zip(a, b, strict=True), start=1) if x != y)


@dataclass(frozen=True)
class LineRegions:
    """Named line spans of files, the regions of the later-edit rule and the counterfactual.

    Attributes:
        spans: path -> ((name, first line, last line), ...), 1-based and inclusive, disjoint.
        store: content hash -> text of every version the environment saw.

    A change's regions: for each line it changed, ``<path>::<name>`` of the span holding it, or
    ``<path>::line <n>`` outside every span; the whole path when the file was created, deleted
    or changed its number of lines (then no line-level restore is possible).
    """

    spans: Mapping[str, tuple[tuple[str, int, int], ...]]
    store: Mapping[str, str]

    def of_change(self, change: FileChange) -> frozenset[str]:
        """The regions one recorded change touched."""
        if change.before is None or change.after is None:
            return frozenset({change.path})
        lines = changed_lines(self.store[change.before], self.store[change.after])
        if lines is None:
            return frozenset({change.path})
        return frozenset(self._region(change.path, n) for n in lines)

    def of_turns(self, turns: Sequence[TurnChanges]) -> frozenset[str]:
        """The regions the changes of ``turns`` touched."""
        return frozenset(r for tc in turns for c in tc.changes for r in self.of_change(c))

    def _region(self, path: str, line: int) -> str:
        for name, first, last in self.spans.get(path, ()):
            if first <= line <= last:
                return f"{path}::{name}"
        return f"{path}::line {line}"

    def lines_of(self, region: str) -> tuple[int, int]:
        """(first, last) line of a named region ``<path>::<name>``."""
        path, _, name = region.partition("::")
        if name.startswith("line "):
            n = int(name[len("line ") :])
            return n, n
        for span_name, first, last in self.spans.get(path, ()):
            if span_name == name:
                return first, last
        raise KeyError(f"no region {region!r}")

    def restore(self, path: str, final: str, before: str, regions: frozenset[str]) -> str:
        """``final`` with the lines of ``path``'s ``regions`` taken from ``before``."""
        lines, old = final.split("\n"), before.split("\n")
        if len(lines) != len(old):
            raise ValueError(f"{path}: the texts differ in their number of lines")
        for region in sorted(r for r in regions if r.startswith(f"{path}::")):
            first, last = self.lines_of(region)
            lines[first - 1 : last] = old[first - 1 : last]
        return "\n".join(lines)
