"""Trajectory records: one Parquet row per rollout with a declared schema (:class:`TrajectoryRow`,
whose keys are the schema's columns)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.agent.candidates import location_regions
from editcredit.agent.edit_blocks import (
    EditBlock,
    LineRegions,
    TurnChanges,
    counterfactual_tree,
    edit_blocks,
    is_default_test_path,
    select_block,
)
from editcredit.agent.reward import RewardComponents
from editcredit.agent.rollout import Episode
from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport
from editcredit.grading.stored_report import stored_report

TRAJECTORY_SCHEMA = pa.schema(
    [
        ("rollout_key", pa.string()),
        ("instance_id", pa.string()),
        ("split", pa.string()),
        ("token_ids", pa.list_(pa.int32())),
        ("logprobs", pa.list_(pa.float32())),
        ("loss_mask", pa.list_(pa.int8())),
        ("turn_of_token", pa.list_(pa.int16())),
        ("n_turns", pa.int16()),
        ("end_reason", pa.string()),
        ("turns", pa.string()),  # JSON: per assistant turn, action text, kind, file changes
        ("edit_blocks", pa.string()),  # JSON: blocks with eligibility and reasons
        ("selected_block", pa.int16()),  # -1 when no block is eligible
        ("final_patch", pa.string()),
        ("report", pa.string()),  # JSON: the final patch's grading report, as stored_report
        ("Y", pa.int8()),
        ("format_error", pa.int8()),
        ("p2p_regression", pa.int8()),
        ("reward", pa.float64()),
        ("masked", pa.bool_()),
        ("mask_cause", pa.string()),  # why a masked rollout is masked ('' when not)
    ]
)


class TrajectoryRow(TypedDict):
    """One rollout as :data:`TRAJECTORY_SCHEMA` stores it (METHOD §2-§4): its tokens, its turns
    and edit blocks, its final patch's grading and its terminal reward."""

    rollout_key: str  # (run, step, task, sample index): ``run:step:instance_id:sample``
    instance_id: str  # the task
    split: str  # the task's split
    token_ids: list[int]  # the whole conversation's tokens, prompt and generations
    logprobs: list[float]  # the sampling log-prob of each token (0.0 where not generated)
    loss_mask: list[int]  # 1 on the valid generated tokens (L is their count)
    turn_of_token: list[int]  # the turn in which each token entered the conversation
    n_turns: int  # assistant turns played
    end_reason: str  # why the episode ended (``submit``, ``context_budget``, ...)
    turns: str  # JSON: per assistant turn, action text, kind, file changes
    edit_blocks: str  # JSON: blocks with eligibility and reasons
    selected_block: int  # the score-blind selected block's index; -1 when none is eligible
    final_patch: str  # the final tree as a patch against the task's files
    report: str  # JSON: the final patch's grading report, as stored_report
    Y: int | None  # resolved (0/1); None when the report is unavailable
    format_error: int  # 1 when an action could not be parsed
    p2p_regression: int | None  # G: 1 when an expected PASS_TO_PASS test does not pass
    reward: float | None  # the terminal reward (None when masked)
    masked: bool  # left out of the update (an infrastructure failure)
    mask_cause: str  # why a masked rollout is masked ('' when not)


@dataclass(frozen=True)
class EpisodeCut:
    """An episode's change records cut into edit blocks (METHOD §2), with the score-blind
    selection and the regions the blocks were judged by (None: by path)."""

    changes: list[TurnChanges]
    blocks: list[EditBlock]
    selected: EditBlock | None
    regions: LineRegions | None

    def counterfactual(self, final_tree: Mapping[str, str], store: Mapping[str, str]):
        """The final tree with the selected block reverted, by the same regions (METHOD §2)."""
        if self.selected is None:
            raise ValueError("no eligible block to revert")
        return counterfactual_tree(final_tree, self.selected, self.changes, store, self.regions)


def block_regions(task: Task, env: Any, located: bool | None = None) -> LineRegions | None:
    """The regions an episode of ``task`` in ``env`` is cut by: every seed function's lines
    (:func:`~editcredit.agent.candidates.location_regions`) when its tries are scoped to their
    function (``located``; by default the environment's ``try_scope``), else None (by path)."""
    if located is None:
        located = getattr(env, "try_scope", "file") == "function"
    return location_regions(task, env.store) if located else None


def cut_episode(task: Task, env: Any, rollout_key: str, located: bool | None = None) -> EpisodeCut:
    """The edit blocks of a finished episode of ``task`` in ``env`` and their score-blind
    selection, cut by :func:`block_regions` (the one cut of the probe and of training)."""
    changes = [TurnChanges.from_mapping(t.turn, t.changes) for t in env.turns if t.changes]
    regions = block_regions(task, env, located)
    blocks = edit_blocks(changes, is_default_test_path, regions)
    return EpisodeCut(changes, blocks, select_block(blocks, rollout_key), regions)


def episode_blocks(episode: Episode):
    """Edit blocks of an episode and the score-blind selection (METHOD §2), cut as its
    environment's ``try_scope`` says (:func:`cut_episode`)."""
    cut = cut_episode(episode.task, episode.env, episode.rollout_key)
    return cut.changes, cut.blocks, cut.selected


def trajectory_row(
    episode: Episode, report: GradingReport, reward: RewardComponents
) -> TrajectoryRow:
    _, blocks, selected = episode_blocks(episode)
    # the reward's fields complete the row (a ** expansion mypy cannot match to the keys)
    row = {
        "rollout_key": episode.rollout_key,
        "instance_id": episode.task.instance_id,
        "split": episode.task.split,
        "token_ids": episode.token_ids,
        "logprobs": episode.logprobs,
        "loss_mask": episode.loss_mask,
        "turn_of_token": episode.turn_of_token,
        "n_turns": len(episode.env.turns),
        "end_reason": episode.env.end_reason,
        "turns": json.dumps([t.to_dict() for t in episode.env.turns], sort_keys=True),
        "edit_blocks": json.dumps([b.to_dict() for b in blocks], sort_keys=True),
        "selected_block": -1 if selected is None else selected.index,
        "final_patch": episode.env.final_patch(),
        "report": json.dumps(stored_report(report), sort_keys=True),
        **{k: v for k, v in asdict(reward).items()},
    }
    return cast(TrajectoryRow, row)


def write_trajectories(rows: list[TrajectoryRow], path: Path) -> None:
    table = pa.Table.from_pylist(rows, schema=TRAJECTORY_SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
