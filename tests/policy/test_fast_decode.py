"""The fast decode loop agrees with the Hugging Face forward (CPU, eager): logits of left-padded
batches, and the log-probs it records for the tokens it samples."""

from __future__ import annotations

import pytest
import torch
from policyfactory import tiny_qwen2

from editcredit.policy.fast_decode import FastGenerator, Qwen2Decoder

PAD, EOS = 0, 1


def _tiny() -> torch.nn.Module:
    return tiny_qwen2(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=PAD,
        eos_token_id=EOS,
    )


@pytest.fixture(scope="module")
def model():
    return _tiny().eval()


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
    gen = FastGenerator(model, EOS, PAD, use_graph=False, compile=False)
    outs = gen.generate(PROMPTS, max_new_tokens=8, temperature=0.7, seed=3)
    for prompt, out in zip(PROMPTS, outs, strict=True):
        seq = prompt + out.token_ids
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0]
        ref = torch.log_softmax(logits.float() / 0.7, -1)
        for j, (tok, lp) in enumerate(zip(out.token_ids, out.logprobs, strict=True)):
            assert lp == pytest.approx(float(ref[len(prompt) + j - 1, tok]), abs=1e-4)


def test_same_seed_same_tokens(model):
    gen = FastGenerator(model, EOS, PAD, use_graph=False, compile=False)
    a = gen.generate(PROMPTS, 6, 1.0, seed=11)
    b = gen.generate(PROMPTS, 6, 1.0, seed=11)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    assert [o.logprobs for o in a] == [o.logprobs for o in b]


def _assert_logprobs_match_hf(model, prompts, outs, temperature, abs_tol=1e-4):
    for prompt, out in zip(prompts, outs, strict=True):
        seq = prompt + out.token_ids
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0]
        ref = torch.log_softmax(logits.float() / temperature, -1)
        for j, (tok, lp) in enumerate(zip(out.token_ids, out.logprobs, strict=True)):
            assert lp == pytest.approx(float(ref[len(prompt) + j - 1, tok]), abs=abs_tol)


def test_weights_changed_between_calls_are_the_weights_decoded(model):
    """The fused projection buffers follow the model: a policy updated in place between two
    calls (as in training) is decoded with its new weights, not a stale copy."""
    changed = _tiny().eval()
    changed.load_state_dict(model.state_dict())
    gen = FastGenerator(changed, EOS, PAD, use_graph=False, compile=False)
    gen.generate(PROMPTS, 4, 1.0, seed=1)
    with torch.no_grad():
        for layer in changed.model.layers:
            layer.self_attn.k_proj.weight.mul_(1.5)
            layer.mlp.up_proj.weight.add_(0.05)
            layer.self_attn.q_proj.bias.add_(0.1)
    outs = gen.generate(PROMPTS, 10, 0.8, seed=2)
    _assert_logprobs_match_hf(changed, PROMPTS, outs, 0.8)


@pytest.mark.slow
def test_compiled_step_records_the_same_logprobs(model):
    """torch.compile fuses the decode step; the recorded log-probs stay those of the model."""
    gen = FastGenerator(model, EOS, PAD, use_graph=False, compile=True)
    outs = gen.generate(PROMPTS, 12, 0.9, seed=4)
    _assert_logprobs_match_hf(model, PROMPTS, outs, 0.9)
    eager = FastGenerator(model, EOS, PAD, use_graph=False, compile=False).generate(
        PROMPTS, 12, 0.9, seed=4
    )
    assert [o.token_ids for o in outs] == [o.token_ids for o in eager]


def test_shape_buckets_are_reused_across_turns(model):
    """A shrinking batch and growing prompts (a multi-turn rollout) reuse few buckets."""
    gen = FastGenerator(model, EOS, PAD, use_graph=False, compile=False)
    turns = [PROMPTS, [p + [20, 21] for p in PROMPTS[:2]], [PROMPTS[0] + [22] * 5]]
    for prompts in turns:
        outs = gen.generate(prompts, 5, 1.0, seed=9)
        assert len(outs) == len(prompts)
        _assert_logprobs_match_hf(model, prompts, outs, 1.0)
    assert sorted(gen._slots) == [(1, 128, 16), (2, 128, 16), (4, 128, 16)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graph replay needs a GPU")
@pytest.mark.parametrize(("compile", "autocast"), [(False, False), (True, False), (False, True)])
def test_graph_replay_on_gpu_records_the_models_logprobs(model, compile, autocast):
    """Graph replay (compiled or not) records the model's log-probs; under a training job's
    autocast too (its cached weight casts must not be what the graph reads)."""
    gpu = _tiny()
    gpu.load_state_dict(model.state_dict())
    gpu = gpu.cuda().eval()
    gen = FastGenerator(gpu, EOS, PAD, compile=compile)
    for _ in range(2):  # the second call replays a graph captured in an exited autocast
        with torch.autocast("cuda", torch.bfloat16, enabled=autocast):
            outs = gen.generate(PROMPTS, 20, 0.8, seed=5)
    assert all(slot.graph is not None for slot in gen._slots.values())
    _assert_logprobs_match_hf(model, PROMPTS, outs, 0.8, abs_tol=2e-4)


def test_decoding_under_autocast_writes_the_cache_in_its_own_dtype(model):
    """A training job generates with its fp32 policy under bf16 autocast (as on GPU): the
    decoder runs in the model's dtype, so the log-probs are the fp32 model's."""
    gen = FastGenerator(model, EOS, PAD, use_graph=False, compile=False)
    with torch.autocast("cpu", torch.bfloat16):
        outs = gen.generate(PROMPTS, 6, 1.0, seed=2)
    assert [len(o.token_ids) for o in outs] and all(o.logprobs for o in outs)
    _assert_logprobs_match_hf(model, PROMPTS, outs, 1.0)


@pytest.mark.parametrize("prompts", [[[5], [7]], [[5], [7, 8, 9]], [[4, 5, 6]]])
def test_short_and_ragged_prompts(model, prompts):
    """One-token prompts (a prefill of width 1) and ragged batches record the model's
    log-probs."""
    outs = FastGenerator(model, EOS, PAD, use_graph=False, compile=False).generate(
        prompts, 6, 1.0, seed=3
    )
    _assert_logprobs_match_hf(model, prompts, outs, 1.0)
