"""The known truth of every block of an episode (agent/episode_truth.py) on a frozen multi-bug
task: labels from the change records and the content store, the truth control's tokens and the
rows the credit-vs-truth diagnostics read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from editcredit.agent.edit_blocks import TurnChanges, edit_blocks, is_default_test_path
from editcredit.agent.episode_truth import episode_block_truths, truth_rows, truth_tokens
from editcredit.agent.protocol import content_hash
from editcredit.data.block_truth import BlockTruth, observed_mutants
from editcredit.data.task import Task

RECORDS = json.loads((Path(__file__).parents[1] / "data" / "block_truth_tasks.json").read_text())
TASKS = {t["instance_id"]: Task.model_validate(t) for t in RECORDS}
TWO = TASKS["multibugs__calendar_math__2bugs__44b1f6da"]
LEAP = TASKS["multibugs__calendar_math__is_leap_year__82f11e7b"]
CAL = "calendar_math.py"

START = TWO.files[CAL]
FIX_0 = START.replace("if 0 > hours:", "if hours > 0:")
MUTANT = FIX_0.replace("    if year % 100 == 0:\n", "    if not (year % 100 == 0):\n")
FIX_1 = MUTANT.replace("month > 11:", "month > 12:")
HELPER = "def helper():\n    return 1\n"
# turn -> (path, text before, text after); turns 1, 3 and 5 ran the tests (no change)
EDITS = {
    0: (CAL, START, FIX_0),  # fix bug 0 (its file is changed later: ineligible)
    2: ("helper.py", None, HELPER),  # a new file: other, eligible
    4: (CAL, FIX_0, MUTANT),  # writes is_leap_year's observed mutant (ineligible)
    6: (CAL, MUTANT, FIX_1),  # fix bug 1: eligible
}
STORE = {content_hash(t): t for _, a, b in EDITS.values() for t in (a, b) if t is not None}
TURNS = [
    TurnChanges.from_mapping(
        turn, {path: (None if a is None else content_hash(a), content_hash(b))}
    )
    for turn, (path, a, b) in EDITS.items()
]
BLOCKS = edit_blocks(TURNS, is_default_test_path)
MUTANTS = observed_mutants(TASKS.values())
# a prompt token (-1), then 3 generated tokens and 2 observation tokens per turn 0..6
TURN_OF_TOKEN = [-1] + [t for t in range(7) for _ in range(5)]
LOSS_MASK = [0] + [1, 1, 1, 0, 0] * 7


def test_each_block_gets_its_label():
    assert [(b.turns, b.eligible) for b in BLOCKS] == [
        ((0,), False),
        ((2,), True),
        ((4,), False),
        ((6,), True),
    ]
    truths = episode_block_truths(TWO, BLOCKS, TURNS, STORE, MUTANTS)
    assert truths == {
        0: BlockTruth("fix", (0,)),
        1: BlockTruth("other"),
        2: BlockTruth("harmful", (), (), tuple(sorted(LEAP.FAIL_TO_PASS))),
        3: BlockTruth("fix", (1,)),
    }


def test_a_block_whose_texts_the_store_lacks_has_no_label():
    store = {h: t for h, t in STORE.items() if t != FIX_0}
    assert set(episode_block_truths(TWO, BLOCKS, TURNS, store, MUTANTS)) == {1, 3}


def test_the_truth_tokens_are_the_eligible_labelled_blocks_turns():
    truths = episode_block_truths(TWO, BLOCKS, TURNS, STORE, MUTANTS)
    tau = truth_tokens(BLOCKS, truths, TURN_OF_TOKEN, LOSS_MASK)
    turns, valid = np.array(TURN_OF_TOKEN), np.array(LOSS_MASK) == 1
    assert np.all(tau[valid & (turns == 6)] == 1.0)
    assert np.all(tau[~(valid & (turns == 6))] == 0.0)  # ineligible fix and harmful: 0
    harmful = {**truths, 3: BlockTruth("harmful", (), (), ("x",))}
    assert set(truth_tokens(BLOCKS, harmful, TURN_OF_TOKEN, LOSS_MASK)) == {0.0, -1.0}


def test_the_rows_of_the_diagnostics():
    truths = episode_block_truths(TWO, BLOCKS, TURNS, STORE, MUTANTS)
    rows = truth_rows("run:1:task:0", BLOCKS, truths, TURN_OF_TOKEN, LOSS_MASK)
    assert [
        (r["block"], r["eligible"], r["label"], r["fixed_bugs"], r["tokens"]) for r in rows
    ] == [
        (0, False, "fix", "0", 3),
        (1, True, "other", "", 3),
        (2, False, "harmful", "", 3),
        (3, True, "fix", "1", 3),
    ]
    assert {r["rollout_key"] for r in rows} == {"run:1:task:0"}
