"""The policy update: aggregation weights equal the registered aggregation, and micro-batching
does not change the accumulated gradient."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from policyfactory import tiny_qwen2, update_sequences

from editcredit.policy.model import enable_activation_checkpointing
from editcredit.rl.losses import aggregate
from editcredit.rl.update import (
    aggregation_weights,
    generated_logprobs,
    group_mini_batches,
    padded_batch,
    plan_micro_batches,
    policy_update,
    step_update,
)


@pytest.mark.parametrize("how", ["prompt_mean", "token_mean", "sequence_mean"])
def test_weights_reproduce_the_aggregation(how):
    g = torch.Generator().manual_seed(0)
    mask = (torch.rand(5, 7, generator=g) > 0.4).double()
    x = torch.randn(5, 7, generator=g, dtype=torch.float64)
    groups = ["a", "a", "b", "c", "c"]
    w = aggregation_weights(mask, groups, how)
    assert float((w * x).sum()) == pytest.approx(float(aggregate(x, mask, groups, how)), abs=1e-12)


def _model():
    return tiny_qwen2(max_position_embeddings=64, tie_word_embeddings=False)


def _sequences():
    return update_sequences([np.arange(6 + i) >= 3 for i in range(5)])


@pytest.mark.parametrize("how", ["prompt_mean", "token_mean"])
def test_micro_batch_size_does_not_change_the_gradient(how):
    grads = []
    for mbs in (1, 2, 5):
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        stats = policy_update(
            model,
            opt,
            _sequences(),
            policy_loss="ppo_clip",
            loss_aggregation=how,
            ppo_clip=0.2,
            dppo_delta=0.15,
            temperature=1.0,
            micro_batch_size=mbs,
            micro_batch_tokens=0,
            max_grad_norm=1e9,
        )
        grads.append(stats["grad_norm"])
        assert stats["micro_batches"] == -(-5 // mbs)
        assert stats["tokens"] == sum(6 + i for i in range(5))  # real tokens, never padding
    assert grads[0] == pytest.approx(grads[1], rel=1e-5) == pytest.approx(grads[2], rel=1e-5)


@pytest.mark.parametrize(
    ("lengths", "max_sequences", "max_tokens", "runs"),
    [
        ([5, 5, 5, 5], 2, 0, [(0, 2), (2, 4)]),  # by count only
        ([5, 5, 5], 8, 0, [(0, 3)]),
        ([4, 4, 4, 4], 8, 10, [(0, 2), (2, 4)]),  # 2 x 4 = 8 fits, 3 x 4 = 12 does not
        ([2, 8, 2], 8, 10, [(0, 1), (1, 2), (2, 3)]),  # the longest sets the padded width
        ([3, 30, 3, 3], 8, 10, [(0, 1), (1, 2), (2, 4)]),  # too long alone: its own run
        ([6, 4], 8, 12, [(0, 2)]),  # exactly the cap fits
        ([4, 4, 4], 2, 100, [(0, 2), (2, 3)]),  # the count binds before the tokens
        ([], 4, 10, []),
    ],
)
def test_micro_batch_plan(lengths, max_sequences, max_tokens, runs):
    plan = plan_micro_batches(lengths, max_sequences, max_tokens)
    assert [(r.start, r.stop) for r in plan] == runs


def _grad_after_update(model, **over):
    grads = {}
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    opt.step = lambda: grads.update({n: p.grad.clone() for n, p in model.named_parameters()})
    kw = dict(micro_batch_size=5, micro_batch_tokens=0) | over
    stats = policy_update(
        model, opt, _sequences(), policy_loss="dppo_binary_tv", loss_aggregation="prompt_mean",
        ppo_clip=0.2, dppo_delta=0.15, temperature=1.0, max_grad_norm=1e9, **kw,
    )  # fmt: skip
    return grads, stats


def test_a_token_cap_splits_the_work_not_the_gradient():
    ref, _ = _grad_after_update(_model())
    capped, stats = _grad_after_update(_model(), micro_batch_tokens=16)
    assert stats["micro_batches"] == 4  # lengths 6..10: (6, 7) then one each
    for name, g in ref.items():
        torch.testing.assert_close(capped[name], g, atol=1e-6, rtol=1e-5)


def _saved_activations(model) -> int:
    """Elements autograd keeps for the backward of one forward of the decoder."""
    saved = []

    def pack(t):
        saved.append(t.numel())
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model.model(input_ids=torch.arange(32).view(4, 8) % 50, use_cache=False)
    return sum(saved)


def test_activation_checkpointing_keeps_less_and_gives_the_same_gradient():
    ref, _ = _grad_after_update(_model())
    model = _model()
    plain = _saved_activations(model)
    enable_activation_checkpointing(model)
    assert _saved_activations(model) < plain / 2
    ours, _ = _grad_after_update(model)
    for name, g in ref.items():
        torch.testing.assert_close(ours[name], g, atol=0, rtol=0)


@pytest.mark.parametrize(
    ("groups", "parts", "plan"),
    [
        (["a", "a", "b", "b"], 1, [[0, 1, 2, 3]]),
        (["a", "a", "b", "b"], 2, [[0, 1], [2, 3]]),
        (["a", "b", "a", "b"], 2, [[0, 2], [1, 3]]),  # whole groups, first-appearance order
        (["a", "b", "c"], 2, [[0, 1], [2]]),  # the first mini-batch takes the extra group
        (["a", "b"], 5, [[0], [1]]),  # never more mini-batches than groups
        (["x", "y", "y", "z", "x"], 3, [[0, 4], [1, 2], [3]]),
    ],
)
def test_group_mini_batches(groups, parts, plan):
    assert group_mini_batches(groups, parts) == plan


def test_right_padded_log_probs_need_no_attention_mask():
    """The update reads right-padded rows without a mask: the same log-probs and gradient."""
    model, sequences = _model(), _sequences()
    ids, attn, mask, old, _ = padded_batch(sequences, torch.device("cpu"))
    assert int((attn == 0).sum()) > 0  # rows of different lengths: padding on the right

    def logprobs_and_grads(attention_mask):
        model.zero_grad()
        lp, _ = generated_logprobs(model, ids, attention_mask, mask, old, 1.0)
        (lp * mask).sum().backward()
        return lp.detach(), [p.grad.clone() for p in model.parameters()]

    masked, masked_grads = logprobs_and_grads(attn)
    unmasked, unmasked_grads = logprobs_and_grads(None)
    torch.testing.assert_close(unmasked * mask, masked * mask, atol=1e-5, rtol=1e-5)
    for a, b in zip(unmasked_grads, masked_grads, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def _on_policy(model, sequences):
    """The sequences with the model's own log-probs, as if it had sampled them."""
    out = []
    for s in sequences:
        ids, attn, mask, old, _ = padded_batch([s], torch.device("cpu"))
        with torch.no_grad():
            lp, _ = generated_logprobs(model, ids, attn, mask, old, 1.0)
        out.append(dataclasses.replace(s, logprobs=lp[0].tolist()))
    return out


def _step_update(model, mini_batches, epochs, policy_loss="dppo_binary_tv"):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    return step_update(
        model, opt, _on_policy(model, _sequences()), mini_batches=mini_batches, epochs=epochs,
        policy_loss=policy_loss, loss_aggregation="prompt_mean", ppo_clip=0.2, dppo_delta=0.15,
        temperature=1.0, micro_batch_size=5, micro_batch_tokens=0, max_grad_norm=1e9,
    )  # fmt: skip


def test_one_mini_batch_one_epoch_is_one_policy_update():
    ref_model, ours_model = _model(), _model()
    opt = torch.optim.SGD(ref_model.parameters(), lr=0.5)
    ref = policy_update(
        ref_model, opt, _on_policy(ref_model, _sequences()), policy_loss="dppo_binary_tv",
        loss_aggregation="prompt_mean",
        ppo_clip=0.2, dppo_delta=0.15, temperature=1.0, micro_batch_size=5, micro_batch_tokens=0,
        max_grad_norm=1e9,
    )  # fmt: skip
    ours = _step_update(ours_model, 1, 1)
    assert ours["optimizer_steps"] == 1
    assert ours["loss"] == pytest.approx(ref["loss"], rel=1e-6)
    assert ours["grad_norm"] == pytest.approx(ref["grad_norm"], rel=1e-6)
    for (name, a), b in zip(ref_model.named_parameters(), ours_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-7, rtol=1e-6, msg=name)


@pytest.mark.parametrize("policy_loss", ["dppo_binary_tv", "ppo_clip"])
def test_later_optimiser_steps_see_a_moved_policy_so_the_trust_region_acts(policy_loss):
    one = _step_update(_model(), 1, 1, policy_loss)
    assert one["tv_masked_fraction"] == 0.0  # the ratio is 1 at the only forward pass
    several = _step_update(_model(), 2, 3, policy_loss)
    assert several["optimizer_steps"] == 6
    assert several["tv_masked_fraction"] > 0.0
    assert several["valid_tokens"] == one["valid_tokens"]  # one pass's tokens, not six
