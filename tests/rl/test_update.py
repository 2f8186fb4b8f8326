"""The policy update: aggregation weights equal the registered aggregation, and micro-batching
does not change the accumulated gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from policyfactory import tiny_qwen2

from editcredit.rl.losses import aggregate
from editcredit.rl.update import UpdateSequence, aggregation_weights, policy_update


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
    rng = np.random.default_rng(0)
    out = []
    for i in range(5):
        n = 6 + i
        valid = np.zeros(n, dtype=bool)
        valid[3:] = True
        out.append(
            UpdateSequence(
                token_ids=rng.integers(0, 50, n).tolist(),
                logprobs=(-rng.random(n)).tolist(),
                valid=valid,
                advantages=np.where(valid, rng.normal(size=n), 0.0),
                group=f"g{i % 2}",
            )
        )
    return out


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
            max_grad_norm=1e9,
        )
        grads.append(stats["grad_norm"])
        assert stats["micro_batches"] == -(-5 // mbs)
        assert stats["tokens"] == sum(6 + i for i in range(5))  # real tokens, never padding
    assert grads[0] == pytest.approx(grads[1], rel=1e-5) == pytest.approx(grads[2], rel=1e-5)
