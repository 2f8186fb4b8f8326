"""The SFT loss computes the last decoder layer only where a hidden state is read: the states,
the loss and its gradients equal the full forward pass's (up to the order of float sums)."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from editcredit.policy.hidden_at import hidden_at, supports_partial_last_layer
from editcredit.policy.model import new_model, tiny_config
from editcredit.policy.sft import weighted_lm_loss


def qwen(layers: int, heads: int, kv_heads: int, seed: int = 0):
    arch = {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": kv_heads,
        "max_positions": 64,
    }
    return new_model(tiny_config(50, arch, 0, 1, 2), seed).train()


def batch(lengths: list[int], share: float, seed: int = 0):
    """Right-padded rows of the given lengths, targets weighing 1 with probability ``share``."""
    g = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.zeros(len(lengths), width, dtype=torch.long)
    weights = torch.zeros(len(lengths), width)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(3, 50, (n,), generator=g)
        weights[row, 1:n] = (torch.rand(n - 1, generator=g) < share).float()
    return ids, weights


def full_loss(model, ids, weights):
    """The loss as the model's own full forward pass gives it: every layer at every position."""
    hidden = model.base_model(input_ids=ids).last_hidden_state[:, :-1]
    keep = weights[:, 1:] > 0
    logits = model.get_output_embeddings()(hidden[keep]).float()
    ce = torch.nn.functional.cross_entropy(logits, ids[:, 1:][keep], reduction="none")
    return (ce * weights[:, 1:][keep]).sum() / weights[:, 1:].sum().clamp(min=1e-8)


@pytest.mark.parametrize(
    ("layers", "heads", "kv_heads", "lengths", "share"),
    [
        (1, 2, 1, [9, 17, 4], 0.3),  # one layer: the only layer is the last
        (2, 4, 2, [30, 12, 30, 7], 0.15),  # grouped-query attention, the default's shape
        (3, 4, 4, [20, 20], 1.0),  # every position read
        (2, 2, 1, [25, 6, 14], 0.05),  # rows with no target read
    ],
)
def test_the_loss_and_its_gradients_are_the_full_forward_passes(
    layers, heads, kv_heads, lengths, share
):
    ids, weights = batch(lengths, share)
    ours, theirs = qwen(layers, heads, kv_heads), qwen(layers, heads, kv_heads)
    assert supports_partial_last_layer(ours)
    loss = weighted_lm_loss(ours, ids, weights)
    reference = full_loss(theirs, ids, weights)
    loss.backward()
    reference.backward()
    assert loss.item() == pytest.approx(reference.item(), abs=1e-5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert torch.allclose(p.grad, q.grad, atol=1e-5), name


def test_the_states_are_read_in_row_major_order():
    model = qwen(2, 4, 2).eval()
    ids, weights = batch([12, 5, 12], 0.4, seed=3)
    keep = weights > 0
    full = model.base_model(input_ids=ids).last_hidden_state[keep]
    with torch.no_grad():
        assert torch.allclose(hidden_at(model, ids, keep), full, atol=1e-5)


def test_another_architecture_runs_its_full_forward_pass():
    config = LlamaConfig(
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(config)
    assert not supports_partial_last_layer(model)
    ids, weights = batch([10, 6], 0.5)
    keep = weights > 0
    with torch.no_grad():
        full = model.base_model(input_ids=ids).last_hidden_state[keep]
        assert torch.equal(hidden_at(model, ids, keep), full)
