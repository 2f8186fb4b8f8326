"""Decision points of a real episode (MinibugsEnv on the docker sandbox), their visible features,
and their checkpoint trees graded once each through the strict grader."""

from __future__ import annotations

import pyarrow as pa
import pytest
from taskfactory import make_calc_task

from editcredit.agent.candidates import candidate_fixes
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.stopping.build import CHECKPOINTS_SCHEMA, checkpoint_rows, sandbox_grader
from editcredit.stopping.points import TrajectoryError, decision_points, replay_trees

WRONG = "edit calc.py\n- return a - b\n+ return b - a"
RIGHT = "edit calc.py\n- return b - a\n+ return a + b"
ACTIONS = ["run", WRONG, "run", RIGHT, "run", "submit"]
# generated tokens per assistant turn (the rest are prompt/observation tokens)
TOKENS = [2, 5, 1, 4, 1, 1]


def _episode(sandbox):
    task = make_calc_task()
    env = MinibugsEnv(
        sandbox, max_turns=10, numbered_lines=False, candidates=False, try_scope="file"
    )
    env.reset(task)
    for action in ACTIONS:
        env.step(action)
    turns = [t.to_dict() for t in env.turns]
    turn_of_token, mask, lps = [-1, -1], [0, 0], [0.0, 0.0]
    for turn, n in enumerate(TOKENS):
        turn_of_token += [turn] * n + [-1]
        mask += [1] * n + [0]
        lps += [-0.5 * (turn + 1)] * n + [0.0]
    return task, env, turns, turn_of_token, mask, lps


@pytest.fixture(scope="module")
def episode(docker_sandbox):
    return _episode(docker_sandbox)


def test_points_follow_every_turn_from_the_first_edit(episode):
    task, env, turns, tot, mask, lps = episode
    points = decision_points(task.files, turns, tot, mask, lps)
    assert [p.turn for p in points] == [1, 2, 3, 4, 5]
    assert [p.is_end for p in points] == [False] * 4 + [True]
    assert [p.block_end for p in points] == [True, False, True, False, False]
    f = [p.features for p in points]
    # table: (turn, tokens, edits, blocks, turns since edit, run seen, passed, failed,
    #         run after last edit, block tokens)
    expected = [
        (1, 7, 1, 1, 0, 1, 4, 1, 0, 5),  # the run at turn 0 (bug) precedes the edit
        (2, 8, 1, 1, 1, 1, None, None, 1, 5),
        (3, 12, 2, 2, 0, 1, None, None, 0, 4),
        (4, 13, 2, 2, 1, 1, 5, 0, 1, 4),
        (5, 14, 2, 2, 2, 1, 5, 0, 1, 4),
    ]
    keys = (
        "turn",
        "tokens_so_far",
        "edits_so_far",
        "blocks_so_far",
        "turns_since_edit",
        "run_seen",
        "run_passed",
        "run_failed",
        "run_after_last_edit",
        "block_tokens",
    )
    for got, want in zip(f, expected, strict=True):
        for key, value in zip(keys, want, strict=True):
            if value is not None:
                assert got[key] == value, (key, got)
    assert f[1]["run_failed"] >= 1  # b - a still fails the visible test
    assert f[0]["block_logprob_mean"] == pytest.approx(-1.0)  # turn 1: -0.5 x 2
    assert f[2]["block_logprob_mean"] == pytest.approx(-2.0)
    assert points[-1].patch == env.final_patch()
    assert f[0]["patch_lines"] == 2


def test_a_tampered_record_is_refused(episode):
    task, _, turns, *_ = episode
    bad = [dict(t) for t in turns]
    bad[3] = {**bad[3], "action_text": "edit calc.py\n- return b - a\n+ return b + a"}
    with pytest.raises(TrajectoryError, match="turn 3"):
        replay_trees(task.files, bad, "traj")


def test_checkpoints_are_graded_once_per_tree_with_the_strict_grader(episode, docker_sandbox):
    task, env, turns, tot, mask, lps = episode
    row = {
        "rollout_key": "m|holdout|calc|0",
        "turns": __import__("json").dumps(turns),
        "turn_of_token": tot,
        "loss_mask": mask,
        "logprobs": lps,
        "end_reason": env.end_reason,
    }
    trajs = [
        {
            "model": "base",
            "evalset": "holdout",
            "instance_id": task.instance_id,
            "sample": s,
            "row": {**row, "rollout_key": f"k{s}"},
        }
        for s in range(2)
    ]
    grader = sandbox_grader(docker_sandbox, 0.25, 0.25)
    calls = []

    def grade_many(jobs):
        calls.append(len(jobs))
        return [grader(t, p)[:2] for t, p in jobs]

    rows = checkpoint_rows(trajs, {task.instance_id: task}, grade_many, "file")
    assert calls == [2]  # two distinct trees (b - a, a + b) for ten points
    assert len(rows) == 10
    assert [r["correct_now"] for r in rows[:5]] == [0, 0, 1, 1, 1]
    assert {r["correct_end"] for r in rows} == {1}
    pa.Table.from_pylist(rows, schema=CHECKPOINTS_SCHEMA)  # the declared schema holds


def test_tries_of_listed_candidates_replay_to_the_environments_trees(local_sandbox):
    task = make_calc_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=10, numbered_lines=False, candidates=True, try_scope="file"
    )
    env.reset(task)
    trees = []
    for action in ["try 2", "run", "try 1", "run", "submit"]:
        env.step(action)
        trees.append(dict(env.tree))
    turns = [t.to_dict() for t in env.turns]
    assert replay_trees(task.files, turns, "traj", candidate_fixes(task)) == trees
    with pytest.raises(TrajectoryError, match="turn 0"):
        replay_trees(task.files, turns, "traj")  # without the list, a try cannot replay
