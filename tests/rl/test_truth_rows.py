"""The rollout worker labels every arm's rollouts: one truth row per labelled edit block (METHOD
§3, "Known truth per block"), read from the task's record and the episode's content store, with
no grading; the labels recomputed on the side from the rollout row alone (its turns' change
records and a store rebuilt by replaying its edits) are the same."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from editcredit.agent.edit_blocks import EditBlock, TurnChanges
from editcredit.agent.episode_truth import episode_block_truths
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.agent.rollout import Episode
from editcredit.agent.search_expert import search_episode
from editcredit.data.block_truth import FIX, TRUTH_SCHEMA
from editcredit.rl import rollout_worker
from editcredit.rl.credit import queries_cf, reads_truth
from editcredit.rl.records import RolloutRow, write_table
from editcredit.rl.rollout_worker import GroupJob, RolloutWorker
from editcredit.rl.step_batch import assemble_step
from editcredit.stats.credit_truth import PLACEMENT, credit_truth

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from test_located_tries import WEIGHTS, multi_task  # noqa: E402


def _episode(task, sandbox, key: str) -> Episode:
    """An expert's episode with one prompt token and three generated tokens (and one template
    token) per turn."""
    env = MinibugsEnv(
        sandbox, max_turns=16, numbered_lines=False, candidates=True, try_scope="function"
    )
    env.reset(task)
    search_episode(env, task, random.Random(0), WEIGHTS, 16)
    turn_of_token, mask = [-1], [0]
    for t in env.turns:
        turn_of_token += [t.turn] * 4
        mask += [1, 1, 1, 0]
    n = len(mask)
    return Episode(task, key, env, [0] * n, [0.0] * n, mask, turn_of_token, done=True)


def _worker(sandbox) -> RolloutWorker:
    worker = RolloutWorker.__new__(RolloutWorker)
    worker.device = torch.device("cpu")
    worker.generator = worker.chat = worker.rollout = None
    worker.sandbox = sandbox
    worker.make_env = lambda sandbox: None
    worker.reward_cfg = {"format_penalty": -0.5, "regression_penalty": -0.25}
    worker.f_weight = worker.g_weight = 0.25
    return worker


def recounted_labels(task, row: RolloutRow, env: MinibugsEnv) -> dict[int, str]:
    """Block -> label of a stored rollout row, recomputed from the task's record and the row:
    its edits replayed in ``env`` (a fresh environment of the training's settings, no sandbox
    needed) rebuild the content store; its blocks and change records are the row's."""
    env.reset(task)
    turns = json.loads(row["turns"])
    for turn in turns:
        if turn["changes"]:  # runs and submits change nothing
            env.step(turn["action_text"])
    changes = [TurnChanges.from_mapping(t["turn"], t["changes"]) for t in turns if t["changes"]]
    blocks = [
        EditBlock(
            b["index"], tuple(b["turns"]), tuple(b["paths"]), b["eligible"], tuple(b["reasons"])
        )
        for b in json.loads(row["edit_blocks"])
    ]
    truths = episode_block_truths(task, blocks, changes, env.store)
    return {index: truth.label for index, truth in truths.items()}


@pytest.mark.parametrize("arm", ["O", "M", "T"])
def test_every_arm_writes_the_truth_of_its_rollouts_blocks(arm, monkeypatch, local_sandbox):
    task = multi_task()

    def episodes(jobs, *args, **kwargs):
        return [_episode(t, local_sandbox, key) for t, key in jobs]

    monkeypatch.setattr(rollout_worker, "run_episodes", episodes)
    job = GroupJob(f"{arm}-s0", 3, task, 2, 7, queries_cf(arm), 1.0, reads_truth(arm))
    result = _worker(local_sandbox).run_group(job)
    assert [q["truth"] is not None for q in result["queries"]] == [arm == "T"] * 2
    replay = MinibugsEnv(None, 10**6, False, True, "function")  # replays edits: no sandbox
    for row, query in zip(result["rows"], result["queries"], strict=True):
        truth = query["truth_rows"]
        assert truth and [list(t) for t in truth] == [TRUTH_SCHEMA.names] * len(truth)
        assert {(t["run"], t["step"], t["instance_id"]) for t in truth} == {
            (job.run, 3, task.instance_id)
        }
        assert {t["rollout_key"] for t in truth} == {row["rollout_key"]}
        labels = {t["block"]: t["label"] for t in truth}
        assert labels == recounted_labels(task, row, replay)
        fixed = {int(k) for t in truth if t["label"] == FIX for k in t["fixed_bugs"].split(",")}
        assert fixed == {0, 1}  # the expert fixes both planted bugs
        assert all(t["tokens"] == 3 * len(b["turns"]) for t, b in _blocks_of(truth, row))


def _blocks_of(truth, row):
    blocks = {b["index"]: b for b in json.loads(row["edit_blocks"])}
    return [(t, blocks[t["block"]]) for t in truth]


def test_the_truth_rows_are_what_the_credit_diagnostics_read(monkeypatch, local_sandbox, tmp_path):
    """An M step's ledger against its truth rows, written and read back as truth.parquet."""
    task = multi_task()

    def episodes(jobs, *args, **kwargs):
        return [_episode(t, local_sandbox, key) for t, key in jobs]

    monkeypatch.setattr(rollout_worker, "run_episodes", episodes)
    job = GroupJob("M-s0", 1, task, 2, 7, True, 1.0, False)
    result = _worker(local_sandbox).run_group(job)
    rows, queries = result["rows"], result["queries"]
    credit = assemble_step(
        rows, queries, run="M-s0", arm="M", lam=0.1, c=1.0, normalize_std=False,
        zero_variance_filter=False,
    )  # fmt: skip
    path = tmp_path / "truth.parquet"
    write_table([t for q in queries for t in q["truth_rows"]], TRUTH_SCHEMA, path)
    truth = pd.read_parquet(path)
    assert len(truth) == sum(len(q["truth_rows"]) for q in queries)
    out = credit_truth(pd.DataFrame(credit.ledger), truth, PLACEMENT["M"])
    counted = sum(sum(signs.values()) for signs in out["table"].values())
    assert counted + out["unlabelled"] == sum(r["available"] for r in credit.ledger) > 0
    assert out["unlabelled"] == 0 and out["agreement"] is not None
