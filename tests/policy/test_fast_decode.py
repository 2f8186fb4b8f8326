"""The fast decode loop agrees with the Hugging Face forward (CPU, eager): logits of left-padded
batches, and the log-probs it records for the tokens it samples."""

from __future__ import annotations

import pytest
import torch
from policyfactory import tiny_qwen2

from editcredit.policy.fast_decode import FastGenerator, Qwen2Decoder

PAD, EOS = 0, 1


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=PAD,
        eos_token_id=EOS,
    ).eval()


PROMPTS = [[5, 6, 7, 8, 9, 10], [11, 12, 13], [14, 15, 16, 17]]


def _hf_last_logits(model, prompts):
    W = max(map(len, prompts))
    ids = torch.full((len(prompts), W), PAD)
    mask = torch.zeros_like(ids)
    for r, p in enumerate(prompts):
        ids[r, W - len(p) :] = torch.tensor(p)
        mask[r, W - len(p) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[:, -1]


def test_prefill_logits_match_the_hf_forward(model):
    d = Qwen2Decoder(model, batch=3, max_len=32)
    W = 6
    ids = torch.full((3, W), PAD)
    valid = torch.zeros((3, 32), dtype=torch.bool)
    for r, p in enumerate(PROMPTS):
        ids[r, W - len(p) :] = torch.tensor(p)
        valid[r, W - len(p) : W] = True
    pad = (~valid[:, :W]).sum(-1)
    pos = (torch.arange(W)[None] - pad[:, None]).clamp(min=0)
    with torch.no_grad():
        ours = d.forward(ids, pos, torch.tensor(0), valid)
    torch.testing.assert_close(ours, _hf_last_logits(model, PROMPTS), atol=1e-5, rtol=1e-5)


def test_recorded_logprobs_are_those_of_the_model_for_the_sampled_tokens(model):
    gen = FastGenerator(model, EOS, PAD, use_graph=False)
    outs = gen.generate(PROMPTS, max_new_tokens=8, temperature=0.7, seed=3)
    for prompt, out in zip(PROMPTS, outs, strict=True):
        seq = prompt + out.token_ids
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0]
        ref = torch.log_softmax(logits.float() / 0.7, -1)
        for j, (tok, lp) in enumerate(zip(out.token_ids, out.logprobs, strict=True)):
            assert lp == pytest.approx(float(ref[len(prompt) + j - 1, tok]), abs=1e-4)


def test_same_seed_same_tokens(model):
    gen = FastGenerator(model, EOS, PAD, use_graph=False)
    a = gen.generate(PROMPTS, 6, 1.0, seed=11)
    b = gen.generate(PROMPTS, 6, 1.0, seed=11)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    assert [o.logprobs for o in a] == [o.logprobs for o in b]
