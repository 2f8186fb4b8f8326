"""The known truth of every edit block of an episode (METHOD §3, "Known truth per block").

:func:`editcredit.data.block_truth.block_truth` labels one block from its paths' texts before
and after it; this module finds those texts for each block of an episode and spreads the labels
over the tokens:

- :func:`episode_block_truths`: block index -> :class:`~editcredit.data.block_truth.BlockTruth`,
  from the change records and a content store (hash -> text: the environment's ``store``, or
  one built from replayed trees); a block whose texts the store lacks gets no label.
- :func:`truth_tokens`: the per-token truth of the truth control T (``CreditInput.truth``):
  +1 on the valid tokens of the turns of an eligible block labelled ``fix``, -1 for ``harmful``,
  0 elsewhere.
- :func:`played_truth`: the per-token truth of a finished episode in its environment, cut as
  training cuts it (:func:`editcredit.agent.trajectory.cut_episode`), what the rollout worker
  hands the truth control; None for a task without planted truth.
- :func:`truth_rows`: one row per labelled block (rollout, block, eligibility, label, the bugs
  it fixed, its valid tokens): the table the credit-vs-truth diagnostics read
  (:mod:`editcredit.stats.credit_truth`).

Pure functions: no grades, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from editcredit.agent.edit_blocks import EditBlock, TurnChanges, block_state_before
from editcredit.data.block_truth import (
    FIX,
    HARMFUL,
    BlockTruth,
    ObservedMutant,
    block_truth,
    has_planted_truth,
)
from editcredit.data.task import Task

#: The per-token truth of each label (``CreditInput.truth``).
TRUTH_SIGN = {FIX: 1.0, HARMFUL: -1.0}


def block_state_after(block: EditBlock, turns: Sequence[TurnChanges]) -> dict[str, str | None]:
    """For each path of ``block``, its content hash just after the block's last turn."""
    last: dict[str, str | None] = {}
    wanted = set(block.turns)
    for tc in turns:
        if tc.turn in wanted:
            for change in tc.changes:
                last[change.path] = change.after
    return {p: last[p] for p in block.paths}


def _texts(hashes: Mapping[str, str | None], store: Mapping[str, str]) -> dict[str, str | None]:
    return {p: None if h is None else store[h] for p, h in hashes.items()}


def episode_block_truths(
    task: Task,
    blocks: Sequence[EditBlock],
    turns: Sequence[TurnChanges],
    store: Mapping[str, str],
    mutants: Sequence[ObservedMutant] = (),
) -> dict[int, BlockTruth]:
    """The known truth of each block of an episode of ``task`` whose texts ``store`` holds.

    ``task`` must have planted truth (:func:`~editcredit.data.block_truth.has_planted_truth`);
    ``mutants`` as for :func:`~editcredit.data.block_truth.block_truth`.
    """
    out: dict[int, BlockTruth] = {}
    for block in blocks:
        try:
            before = _texts(block_state_before(block, turns), store)
            after = _texts(block_state_after(block, turns), store)
        except KeyError:
            continue  # a version the store lacks: no label, never a guessed one
        out[block.index] = block_truth(task, before, after, mutants)
    return out


def _block_tokens(block: EditBlock, turn_of_token: np.ndarray, valid: np.ndarray) -> np.ndarray:
    return valid & np.isin(turn_of_token, block.turns)


def truth_tokens(
    blocks: Sequence[EditBlock],
    truths: Mapping[int, BlockTruth],
    turn_of_token: Sequence[int],
    loss_mask: Sequence[int],
) -> np.ndarray:
    """Float64 per token: +1 on the valid tokens of an eligible ``fix`` block's turns, -1 on an
    eligible ``harmful`` one's, 0 elsewhere (ineligible and unlabelled blocks included)."""
    turns = np.asarray(turn_of_token, dtype=np.int64)
    valid = np.asarray(loss_mask, dtype=np.int8) == 1
    tau = np.zeros(turns.shape, dtype=np.float64)
    for block in blocks:
        truth = truths.get(block.index)
        if block.eligible and truth is not None and truth.label in TRUTH_SIGN:
            tau[_block_tokens(block, turns, valid)] = TRUTH_SIGN[truth.label]
    return tau


def played_truth(
    task: Task,
    env: Any,
    rollout_key: str,
    turn_of_token: Sequence[int],
    loss_mask: Sequence[int],
    mutants: Sequence[ObservedMutant] = (),
) -> list[float] | None:
    """:func:`truth_tokens` of a finished episode of ``task`` in ``env`` (its change records and
    content store), its blocks cut as training cuts them (by region under ``agent.try_scope:
    function``); None when ``task`` has no planted truth."""
    from editcredit.agent.trajectory import cut_episode

    if not has_planted_truth(task):
        return None
    cut = cut_episode(task, env, rollout_key)
    truths = episode_block_truths(task, cut.blocks, cut.changes, env.store, mutants)
    return truth_tokens(cut.blocks, truths, turn_of_token, loss_mask).tolist()


def truth_rows(
    rollout_key: str,
    blocks: Sequence[EditBlock],
    truths: Mapping[int, BlockTruth],
    turn_of_token: Sequence[int],
    loss_mask: Sequence[int],
) -> list[dict[str, Any]]:
    """One row per labelled block: ``rollout_key``, ``block``, ``eligible``, ``label``,
    ``fixed_bugs`` (comma-separated indices), ``tokens`` (valid tokens of its turns)."""
    turns = np.asarray(turn_of_token, dtype=np.int64)
    valid = np.asarray(loss_mask, dtype=np.int8) == 1
    return [
        {
            "rollout_key": rollout_key,
            "block": block.index,
            "eligible": block.eligible,
            "label": truths[block.index].label,
            "fixed_bugs": ",".join(str(k) for k in truths[block.index].fixed_bugs),
            "tokens": int(_block_tokens(block, turns, valid).sum()),
        }
        for block in blocks
        if block.index in truths
    ]
