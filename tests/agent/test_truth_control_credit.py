"""The truth control T in training: the rollout worker labels a multi-bug episode's blocks (cut
by region under ``agent.try_scope: function``) from the task's record, and the step's credit
puts T's term on the turns that fixed a planted bug; no counterfactual is graded."""

from __future__ import annotations

import json
import random

import numpy as np
import torch
from test_located_tries import WEIGHTS, multi_task

from editcredit.agent.edit_blocks import EditBlock, TurnChanges
from editcredit.agent.episode_truth import episode_block_truths, played_truth
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.agent.rollout import Episode
from editcredit.agent.search_expert import search_episode
from editcredit.rl import rollout_worker
from editcredit.rl.credit import queries_cf, reads_truth
from editcredit.rl.rollout_worker import GroupJob, RolloutWorker
from editcredit.rl.step_batch import assemble_step


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


def test_t_reads_the_truth_and_sends_no_query():
    assert reads_truth("T") and not queries_cf("T")
    assert not any(reads_truth(arm) for arm in "OBME")
    assert [queries_cf(arm) for arm in "OBME"] == [False, True, True, False]


def test_a_t_step_credits_the_turns_that_fixed_a_planted_bug(monkeypatch, local_sandbox):
    task = multi_task()

    def episodes(jobs, *args, **kwargs):
        return [_episode(t, local_sandbox, key) for t, key in jobs]

    monkeypatch.setattr(rollout_worker, "run_episodes", episodes)
    job = GroupJob("T-s0", 1, task, 2, 7, queries_cf("T"), 1.0, reads_truth("T"))
    result = _worker(local_sandbox).run_group(job)
    rows, queries = result["rows"], result["queries"]
    assert all(q["truth"] is not None and not q["sent"] for q in queries)

    credit = assemble_step(
        rows,
        queries,
        run="T-s0",
        arm="T",
        lam=0.1,
        c=1.0,
        normalize_std=False,
        zero_variance_filter=False,
    )
    assert credit.ledger == [] and credit.metrics["cf_sent"] == 0
    assert credit.metrics["credit_mass_l1"] > 0 and credit.metrics["credit_rollouts"] == 2
    for row, query, adv, seq in zip(
        rows, queries, credit.advantages, credit.sequence_advantages, strict=True
    ):
        assert row["Y"] == 1 and seq == 0.0  # every sample resolved: T's term alone
        blocks = [
            EditBlock(
                b["index"], tuple(b["turns"]), tuple(b["paths"]), b["eligible"], tuple(b["reasons"])
            )
            for b in json.loads(row["edit_blocks"])
        ]
        assert sum(b.eligible for b in blocks) >= 2  # cut by function: one block per bug fixed
        turns = np.asarray(row["turn_of_token"])
        valid = np.asarray(row["loss_mask"]) == 1
        # the labels recomputed on the side, from the environment's records
        episode = _episode(task, local_sandbox, row["rollout_key"])
        changes = [
            TurnChanges.from_mapping(t.turn, t.changes) for t in episode.env.turns if t.changes
        ]
        truths = episode_block_truths(task, blocks, changes, episode.env.store)
        fixing = [b for b in blocks if b.eligible and truths[b.index].label == "fix"]
        assert {k for b in fixing for k in truths[b.index].fixed_bugs} == {0, 1}
        on_fix = valid & np.isin(turns, [t for b in fixing for t in b.turns])
        assert np.all(adv[on_fix] > 0) and np.all(adv[~on_fix] == 0.0)
        assert np.abs(adv).max() <= 1.0  # at most c per token
        assert query["truth"] == played_truth(
            task, episode.env, row["rollout_key"], row["turn_of_token"], row["loss_mask"]
        )
