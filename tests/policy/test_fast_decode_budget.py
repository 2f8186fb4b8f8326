"""The fast generator inside a memory budget (CPU, eager): a call is split into passes that fit,
prompts are encoded a chunk of rows at a time, old shape buckets are dropped to make room, and
the recorded log-probs stay those of the model."""

from __future__ import annotations

import pytest
import torch
from policyfactory import tiny_qwen2

from editcredit.policy import gpu_memory
from editcredit.policy.fast_decode import FastGenerator, Qwen2Decoder

PAD, EOS = 0, 1
PROMPTS = [[5, 6, 7, 8, 9, 10], [11, 12, 13], [14, 15, 16, 17]]


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


def _shape(model) -> gpu_memory.ModelShape:
    return gpu_memory.ModelShape.from_hf_config(model.config.to_dict())


def _budget_for(model, rows: int, width: int, new: int, prefill_rows: int) -> int:
    """A budget whose plan is passes of ``rows`` (a power of two) and ``prefill_rows`` a chunk."""
    shape, length = _shape(model), gpu_memory.bucket_length(width, new)
    slot = gpu_memory.decode_slot_bytes(shape, rows, length, new, 4)
    row = gpu_memory.prefill_row_bytes(shape, width, length, 4)
    return int((slot + prefill_rows * row + row // 2) / gpu_memory.PLAN_HEADROOM) + 1


def _assert_logprobs_match_hf(model, prompts, outs, temperature):
    for prompt, out in zip(prompts, outs, strict=True):
        seq = prompt + out.token_ids
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0]
        ref = torch.log_softmax(logits.float() / temperature, -1)
        for j, (tok, lp) in enumerate(zip(out.token_ids, out.logprobs, strict=True)):
            assert lp == pytest.approx(float(ref[len(prompt) + j - 1, tok]), abs=1e-4)


def test_a_call_larger_than_its_budget_is_decoded_in_passes(model):
    budget = _budget_for(model, rows=2, width=6, new=8, prefill_rows=1)
    gen = FastGenerator(model, EOS, PAD, use_graph=False, memory_budget=budget, compile=False)
    outs = gen.generate(PROMPTS, 8, 0.9, seed=3)
    assert len(outs) == 3 and all(o.token_ids for o in outs)
    _assert_logprobs_match_hf(model, PROMPTS, outs, 0.9)
    assert max(batch for batch, _, _ in gen._slots) == 2  # never the call's 4
    again = gen.generate(PROMPTS, 8, 0.9, seed=3)
    assert [o.token_ids for o in again] == [o.token_ids for o in outs]


def test_a_budget_that_holds_the_call_decodes_it_in_one_pass(model):
    budget = _budget_for(model, rows=4, width=6, new=8, prefill_rows=4)
    gen = FastGenerator(model, EOS, PAD, use_graph=False, memory_budget=budget, compile=False)
    outs = gen.generate(PROMPTS, 8, 0.9, seed=3)
    _assert_logprobs_match_hf(model, PROMPTS, outs, 0.9)
    assert list(gen._slots) == [(4, 128, 16)]


def test_prefill_in_chunks_of_rows_gives_the_logits_of_one_forward(model):
    W, L = 6, 32
    ids = torch.full((3, W), PAD)
    valid = torch.zeros((3, L), dtype=torch.bool)
    for r, p in enumerate(PROMPTS):
        ids[r, W - len(p) :] = torch.tensor(p)
        valid[r, W - len(p) : W] = True
    pad = (~valid[:, :W]).sum(-1)
    pos = (torch.arange(W)[None] - pad[:, None]).clamp(min=0)
    whole, chunked = Qwen2Decoder(model, 3, L), Qwen2Decoder(model, 3, L)
    with torch.no_grad():
        one = whole.forward(ids, pos, torch.tensor(0), valid)
        parts = chunked.prefill(ids, pos, valid, chunk_rows=2)
    torch.testing.assert_close(parts, one, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(chunked.k_cache, whole.k_cache, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(chunked.v_cache, whole.v_cache, atol=1e-5, rtol=1e-5)


def test_old_buckets_are_dropped_to_make_room(model):
    shape, long = _shape(model), [p + [30] * 200 for p in PROMPTS]  # a longer bucket
    small = gpu_memory.decode_slot_bytes(shape, 4, 128, 16, 4)
    large = gpu_memory.decode_slot_bytes(shape, 4, 256, 16, 4)
    row = gpu_memory.prefill_row_bytes(shape, 206, 256, 4)
    budget = int((large + row + small // 2) / gpu_memory.PLAN_HEADROOM) + 1  # not both slots
    gen = FastGenerator(model, EOS, PAD, use_graph=False, memory_budget=budget, compile=False)
    gen.generate(PROMPTS, 8, 1.0, seed=1)
    assert list(gen._slots) == [(4, 128, 16)]
    gen._memory_used = lambda: sum(gen._slot_bytes(k) for k in gen._slots)  # as on a GPU
    outs = gen.generate(long, 8, 1.0, seed=2)
    _assert_logprobs_match_hf(model, long, outs, 1.0)
    assert list(gen._slots) == [(4, 256, 16)]


def test_a_budget_below_one_row_is_a_clear_error(model):
    gen = FastGenerator(model, EOS, PAD, use_graph=False, memory_budget=1000, compile=False)
    with pytest.raises(ValueError, match=r"GPU budget too small.*gpu_mem_mb"):
        gen.generate(PROMPTS, 8, 1.0, seed=1)


def test_without_a_budget_on_cpu_nothing_changes(model):
    """The CPU path (no budget) is the one-pass call of before: the same tokens as a generator
    whose budget holds the whole call, for a power-of-two batch (no padding rows)."""
    prompts = PROMPTS + [[18, 19]]
    plain = FastGenerator(model, EOS, PAD, use_graph=False, compile=False)
    assert plain.memory_budget is None
    a = plain.generate(prompts, 8, 1.0, seed=5)
    budget = _budget_for(model, rows=4, width=6, new=8, prefill_rows=4)
    b = FastGenerator(model, EOS, PAD, use_graph=False, memory_budget=budget, compile=False)
    assert [o.token_ids for o in b.generate(prompts, 8, 1.0, seed=5)] == [o.token_ids for o in a]
