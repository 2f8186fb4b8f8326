"""The update moves the policy the way the advantages say, through the real path.

A fixed batch of real trajectories (a small trained policy playing toy tasks in the real
environment and sandbox, recorded by the rollout worker) goes through one ``policy_update`` with
a small learning rate, for every registered policy loss and aggregation: the summed log-probability
of every sequence with a positive advantage rises and of every sequence with a negative advantage
falls. The log-probabilities the loss takes are those of a plain teacher-forced forward at exactly
the generated positions (no off-by-one, no prompt or observation token), and at the first forward
they equal the log-probabilities recorded when the tokens were sampled.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from policyfactory import toy_tasks
from taskfactory import CONFIG

from editcredit.rl.losses import LOSS_AGGREGATIONS, POLICY_LOSSES
from editcredit.rl.rollout_worker import GroupJob, RolloutWorker, group_seed
from editcredit.rl.step_batch import assemble_step
from editcredit.rl.update import (
    UpdateSequence,
    generated_logprobs,
    padded_batch,
    policy_update,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAMPLES = 6


@pytest.fixture(scope="module")
def batch(half_policy):
    """(model directory, rollout rows, UpdateSequences) of two real task groups at step 1."""
    model_dir = half_policy
    agent = {**CONFIG["agent"], "max_turns": 4, "max_new_tokens": 24}
    worker = RolloutWorker(
        str(model_dir), agent, CONFIG["reward"], CONFIG["grading"], CONFIG["sandbox"]
    )
    try:
        rows, queries = [], []
        for task in toy_tasks(2):
            job = GroupJob("O-s1", 1, task, SAMPLES, group_seed(1, 1, task.instance_id), False, 1)
            result = worker.run_group(job)
            rows += result["rows"]
            queries += result["queries"]
    finally:
        worker.close()
    credit = assemble_step(
        rows,
        queries,
        run="O-s1",
        arm="O",
        lam=0.1,
        c=1.0,
        normalize_std=False,
        zero_variance_filter=False,
    )
    sequences = [
        UpdateSequence(r["token_ids"], r["logprobs"], v, a, r["instance_id"])
        for r, v, a in zip(rows, credit.valid, credit.advantages, strict=True)
    ]
    return model_dir, rows, sequences


def _load(model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)


@torch.no_grad()
def teacher_forced(model, sequences) -> list[np.ndarray]:
    """Per sequence: log p(token_t | tokens_<t) of a plain full forward, at every t >= 1."""
    model.eval()
    out = []
    for s in sequences:
        ids = torch.tensor([list(s.token_ids)])
        logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        out.append(logp[:-1].gather(-1, ids[0, 1:, None]).squeeze(-1).numpy())
    return out


def sequence_logprob(model, sequences) -> np.ndarray:
    return np.array(
        [
            float(lp[s.valid[1:]].sum())
            for lp, s in zip(teacher_forced(model, sequences), sequences, strict=True)
        ]
    )


def test_the_batch_has_both_signs_and_only_generated_tokens_in_the_loss(batch):
    _, rows, sequences = batch
    signs = {np.sign(s.advantages[s.valid][0]) for s in sequences if s.valid.any()}
    assert {-1.0, 1.0} <= signs, "the fixed batch needs successes and failures in a group"
    for row, s in zip(rows, sequences, strict=True):
        turns = np.asarray(row["turn_of_token"])
        assert not s.valid[0]
        assert np.array_equal(s.valid, np.asarray(row["loss_mask"]) == 1)
        assert (turns[s.valid] >= 0).all(), "a prompt or observation token is in the loss"
        assert (np.asarray(row["logprobs"])[~s.valid] == 0.0).all()
        assert (s.advantages[~s.valid] == 0.0).all()


def test_loss_logprobs_are_the_teacher_forced_ones_at_the_generated_positions(batch):
    model_dir, _, sequences = batch
    model = _load(model_dir)
    forced = teacher_forced(model, sequences)
    ids, attn, mask, old, _ = padded_batch(sequences, torch.device("cpu"))
    with torch.no_grad():
        new, entropy = generated_logprobs(model, ids, attn, mask, old, 1.0)
    assert entropy.shape[0] == int(mask.sum())
    for i, (s, lp) in enumerate(zip(sequences, forced, strict=True)):
        n = len(s.token_ids)
        valid = np.asarray(s.valid)
        got = new[i, :n].numpy()
        np.testing.assert_allclose(got[1:][valid[1:]], lp[valid[1:]], atol=1e-5)
        # ... and they are what the sampler recorded (the ratio starts at exactly 1)
        np.testing.assert_allclose(got[valid], np.asarray(s.logprobs)[valid], atol=1e-4)
        assert np.array_equal(got[~valid], np.asarray(s.logprobs)[~valid])  # untouched


@pytest.mark.parametrize("how", sorted(LOSS_AGGREGATIONS))
@pytest.mark.parametrize("loss", sorted(POLICY_LOSSES))
def test_one_update_raises_positive_and_lowers_negative_sequences(batch, loss, how):
    model_dir, _, sequences = batch
    model = _load(model_dir)
    before = sequence_logprob(model, sequences)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    policy_update(
        model,
        optimizer,
        copy.deepcopy(sequences),
        policy_loss=loss,
        loss_aggregation=how,
        ppo_clip=0.2,
        dppo_delta=0.15,
        temperature=1.0,
        micro_batch_size=4,
        micro_batch_tokens=0,
        max_grad_norm=1.0,
    )
    change = sequence_logprob(model, sequences) - before
    adv = np.array([s.advantages[s.valid][0] if s.valid.any() else 0.0 for s in sequences])
    assert (change[adv > 0] > 0).all(), f"positive sequences fell: {change[adv > 0]}"
    assert (change[adv < 0] < 0).all(), f"negative sequences rose: {change[adv < 0]}"
