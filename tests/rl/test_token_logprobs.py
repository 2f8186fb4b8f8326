"""Logits only where the update needs them: the same log-probs, entropies and gradients as the
full vocabulary-wide forward, for the head-only architectures and through the fallback."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from policyfactory import tiny_qwen2, update_sequences

from editcredit.rl.losses import get_policy_loss
from editcredit.rl.token_logprobs import selected_logprobs
from editcredit.rl.update import aggregation_weights, policy_update

IDS = torch.tensor([[3, 7, 9, 11, 2, 0], [5, 6, 8, 10, 12, 14]])
ATTN = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]])


def _full(model, rows, cols, temperature):
    logits = model(input_ids=IDS, attention_mask=ATTN).logits.float() / temperature
    logp = torch.log_softmax(logits, -1)[rows, cols - 1]
    return logp.gather(-1, IDS[rows, cols][:, None]).squeeze(-1), -(logp.exp() * logp).sum(-1)


@pytest.mark.parametrize(
    ("rows", "cols", "temperature"),
    [
        ([0, 0, 1], [1, 4, 5], 1.0),  # scattered positions, both rows
        ([1, 1, 1, 1, 1], [1, 2, 3, 4, 5], 0.7),  # a whole row, another temperature
        ([0], [3], 1.0),  # a single token
    ],
)
@pytest.mark.parametrize("model_type", ["qwen2", "not-head-only"])
def test_selected_logprobs_are_those_of_the_full_forward(rows, cols, temperature, model_type):
    model = tiny_qwen2(tie_word_embeddings=False).eval()
    model.config.model_type = model_type  # an unknown type takes the full forward
    rows, cols = torch.tensor(rows), torch.tensor(cols)
    chosen, entropy = selected_logprobs(model, IDS, ATTN, rows, cols, temperature, autocast=False)
    ref_chosen, ref_entropy = _full(model, rows, cols, temperature)
    torch.testing.assert_close(chosen, ref_chosen, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(entropy, ref_entropy, atol=1e-6, rtol=1e-6)


def test_head_only_types_never_compute_the_vocabulary_wide_logits():
    model = tiny_qwen2().eval()
    model.forward = None  # the full forward would fail
    chosen, _ = selected_logprobs(
        model, IDS, ATTN, torch.tensor([0]), torch.tensor([2]), 1.0, autocast=False
    )
    assert chosen.shape == (1,)


def test_token_zero_has_no_prediction():
    with pytest.raises(ValueError, match="token 0"):
        selected_logprobs(
            tiny_qwen2(), IDS, ATTN, torch.tensor([0]), torch.tensor([0]), 1.0, autocast=False
        )


def _sequences():
    """Two generated turns around an observation in each sequence."""
    masks = [
        (np.arange(n) >= 2) & (np.arange(n) < 4) | (np.arange(n) >= n - 2) for n in (7, 9, 5, 8)
    ]
    return update_sequences(masks, seed=3, logprob_scale=4.0)


@pytest.mark.parametrize("policy_loss", ["ppo_clip", "dppo_binary_tv"])
def test_update_gradient_equals_that_of_the_full_logits_loss(policy_loss):
    seqs = _sequences()
    kw = dict(policy_loss=policy_loss, ppo_clip=0.2, dppo_delta=0.15)
    model = tiny_qwen2(tie_word_embeddings=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    # the update drops .grad after its step: catch the gradients at the step
    grads_ours = {}
    opt.step = lambda: grads_ours.update(
        {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    )
    policy_update(
        model, opt, seqs, loss_aggregation="prompt_mean", temperature=1.0,
        micro_batch_size=4, micro_batch_tokens=0, max_grad_norm=1e9, **kw,
    )  # fmt: skip

    ref = tiny_qwen2(tie_word_embeddings=False)
    ref.train()
    w = max(len(s.token_ids) for s in seqs)
    pad = lambda rows, fill: torch.tensor(  # noqa: E731
        [list(r) + [fill] * (w - len(r)) for r in rows], dtype=torch.float64
    )
    ids = pad([s.token_ids for s in seqs], 0).long()
    attn = pad([[1] * len(s.token_ids) for s in seqs], 0).long()
    mask = pad([s.valid.astype(float) for s in seqs], 0.0)
    old = pad([s.logprobs for s in seqs], 0.0).float()
    adv = pad([s.advantages for s in seqs], 0.0).float()
    weights = aggregation_weights(mask, [s.group for s in seqs], "prompt_mean").float()
    logp = torch.log_softmax(ref(input_ids=ids, attention_mask=attn).logits.float(), -1)
    new = torch.zeros_like(old)
    new[:, 1:] = logp[:, :-1].gather(-1, ids[:, 1:, None]).squeeze(-1)
    loss, _ = get_policy_loss(policy_loss)(
        new, old, adv, mask.float(), ppo_clip=0.2, dppo_delta=0.15
    )
    (weights * loss).sum().backward()
    assert grads_ours
    for name, p in ref.named_parameters():
        torch.testing.assert_close(grads_ours[name], p.grad, atol=1e-6, rtol=1e-5)
