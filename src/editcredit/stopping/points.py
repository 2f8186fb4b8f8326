"""Decision points of one trajectory and what was visible at each (METHOD §12). Pure functions.

A decision point follows every assistant turn from the first edit on; a trajectory without an
edit has one point, its end. At a point the agent could submit the tree it has: the point's
*checkpoint tree* (the task's tree with every edit up to that turn applied). The trajectory's last
point is the agent's own stop. Trees are rebuilt by replaying the recorded edit actions on the
task's tree; each replayed file must hash to the ``after`` recorded by the environment, otherwise
the trajectory is refused (the message names it and the turn).

Features are what the agent had seen by the end of the turn: turn and token counts, edits and
blocks so far, the last visible test run and whether it followed the last edit, the patch's size
and the policy's own log-probabilities of the latest block. Nothing of later turns, nothing of
grading.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.agent.actions import FormatError, apply_action_edit, format_action, parse_action
from editcredit.agent.candidates import Candidate, tree_with, tried_at_location
from editcredit.sandbox.patches import diff_trees

#: feature columns of checkpoints.parquet (the protocol lists those its models use)
FEATURES = (
    "turn",
    "tokens_so_far",
    "edits_so_far",
    "blocks_so_far",
    "turns_since_edit",
    "run_seen",
    "run_passed",
    "run_failed",
    "run_pass_share",
    "run_after_last_edit",
    "patch_lines",
    "block_logprob_mean",
    "block_logprob_min",
    "block_tokens",
)

_RUN_COUNTS = re.compile(r"^tests: (\d+) passed, (\d+) failed")


class TrajectoryError(ValueError):
    """A trajectory whose recorded changes cannot be replayed."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tree_sha256(tree: Mapping[str, str]) -> str:
    """Identity of a file tree: SHA256 over sorted (path, content hash) pairs."""
    h = hashlib.sha256()
    for path in sorted(tree):
        h.update(f"{path}\0{sha256_text(tree[path])}\n".encode())
    return h.hexdigest()


def visible_run_counts(observation: str) -> tuple[int, int] | None:
    """(passed, failed) of a visible test run's observation, or None when it gave no counts."""
    m = _RUN_COUNTS.match(observation or "")
    return (int(m[1]), int(m[2])) if m else None


def replay_trees(
    files: Mapping[str, str],
    turns: Sequence[Mapping[str, Any]],
    where: str,
    candidates: Sequence[Candidate] = (),
):
    """The tree after each turn (a list, one per turn), replaying the recorded edits (a
    ``try`` applies its candidate of ``candidates``, the environment's list for the task: one
    with a location, of ``agent.try_scope: function``, to its function only)."""
    tree = dict(files)
    trees = []
    for t in turns:
        changes = t.get("changes") or {}
        if changes:
            try:
                action = parse_action(t["action_text"])
            except FormatError as exc:
                raise TrajectoryError(f"{where} turn {t['turn']}: unparsable edit ({exc})") from exc
            tried = None
            if action.kind == "try" and 1 <= action.candidate <= len(candidates):
                tried = candidates[action.candidate - 1]
            path = tried.path if tried is not None else action.path
            if action.kind not in ("edit", "try") or set(changes) != {path}:
                raise TrajectoryError(
                    f"{where} turn {t['turn']}: changes {sorted(changes)} "
                    f"do not match the action {format_action(action)!r}"
                )
            before, after = changes[path]
            current = tree.get(path)
            if current is None or sha256_text(current) != before:
                raise TrajectoryError(
                    f"{where} turn {t['turn']}: {path} is not at the recorded 'before' hash"
                )
            new: str | None
            if tried is not None and tried.function:
                new, why = tried_at_location(dict(files), current, tried), "the located try"
            elif tried is not None:
                new, why = tree_with(dict(files), tried), "the candidate's tree"
            else:
                new, why = apply_action_edit(current, action)
            if new is None or sha256_text(new) != after:
                raise TrajectoryError(
                    f"{where} turn {t['turn']}: replaying the edit of "
                    f"{path} does not give the recorded 'after' ({why})"
                )
            tree[path] = new
        trees.append(dict(tree))
    return trees


def patch_lines(patch: str) -> int:
    """Changed lines of a unified diff (added plus removed, headers excluded)."""
    return sum(
        1 for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


@dataclass(frozen=True)
class DecisionPoint:
    """One decision point: where it is, the checkpoint tree, and the visible features."""

    point: int
    turn: int
    is_end: bool
    block_end: bool
    tree: dict[str, str]
    patch: str
    features: dict[str, float]


def _block_starts(edit_turns: list[int]) -> list[int]:
    return [t for t in edit_turns if t - 1 not in edit_turns]


def decision_points(
    files: Mapping[str, str],
    turns: Sequence[Mapping[str, Any]],
    turn_of_token: Sequence[int],
    loss_mask: Sequence[int],
    logprobs: Sequence[float],
    where: str = "trajectory",
    candidates: Sequence[Candidate] = (),
) -> list[DecisionPoint]:
    """Every decision point of a trajectory, in order (see the module docstring)."""
    if not turns:
        raise TrajectoryError(f"{where}: no assistant turn")
    trees = replay_trees(files, turns, where, candidates)
    edit_turns = [int(t["turn"]) for t in turns if t.get("changes")]
    starts = _block_starts(edit_turns)
    generated_by_turn: dict[int, int] = {}
    logprobs_by_turn: dict[int, list[float]] = {}
    for turn, mask, lp in zip(turn_of_token, loss_mask, logprobs, strict=True):
        if mask and turn >= 0:
            generated_by_turn[turn] = generated_by_turn.get(turn, 0) + 1
            logprobs_by_turn.setdefault(turn, []).append(float(lp))
    first = edit_turns[0] if edit_turns else int(turns[-1]["turn"])
    last_turn = int(turns[-1]["turn"])
    points: list[DecisionPoint] = []
    tokens = 0
    last_run: tuple[int, tuple[int, int]] | None = None
    for t, tree in zip(turns, trees, strict=True):
        turn = int(t["turn"])
        tokens += generated_by_turn.get(turn, 0)
        if t.get("kind") == "run":
            counts = visible_run_counts(t.get("observation", ""))
            if counts is not None:
                last_run = (turn, counts)
        if turn < first:
            continue
        edits = [e for e in edit_turns if e <= turn]
        blocks = [s for s in starts if s <= turn]
        last_edit = edits[-1] if edits else -1
        block_turns = [e for e in edits if blocks and e >= blocks[-1]]
        block_lps = [lp for e in block_turns for lp in logprobs_by_turn.get(e, [])]
        passed, failed = last_run[1] if last_run else (0, 0)
        patch = diff_trees(dict(files), tree)
        features = {
            "turn": turn,
            "tokens_so_far": tokens,
            "edits_so_far": len(edits),
            "blocks_so_far": len(blocks),
            "turns_since_edit": turn - last_edit if edits else turn + 1,
            "run_seen": int(last_run is not None),
            "run_passed": passed,
            "run_failed": failed,
            "run_pass_share": passed / (passed + failed) if passed + failed else 0.0,
            "run_after_last_edit": int(last_run is not None and last_run[0] > last_edit),
            "patch_lines": patch_lines(patch),
            "block_logprob_mean": sum(block_lps) / len(block_lps) if block_lps else 0.0,
            "block_logprob_min": min(block_lps) if block_lps else 0.0,
            "block_tokens": len(block_lps),
        }
        assert all(math.isfinite(float(v)) for v in features.values()), (where, features)
        points.append(
            DecisionPoint(
                point=len(points),
                turn=turn,
                is_end=turn == last_turn,
                block_end=bool(t.get("changes")) and turn + 1 not in edit_turns,
                tree=tree,
                patch=patch,
                features=features,
            )
        )
    return points


def turns_of(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``turns`` JSON of a trajectory row."""
    return json.loads(row["turns"] or "[]")
