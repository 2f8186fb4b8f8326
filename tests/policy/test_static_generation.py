"""The static-cache generator samples what ``TransformersGenerator`` samples: the same ids, the
same log-probs, over multi-turn calls with kept rows, repeated prompts and rows that start
afresh; and it keeps exactly the keys and values the model computes."""

from __future__ import annotations

import pytest
import torch
from policyfactory import TURN_PAD as PAD
from policyfactory import TURN_STOPS as STOPS
from policyfactory import assert_same_samples, next_turn, turn_policy, turn_prompts

from editcredit.policy.generation import TransformersGenerator
from editcredit.policy.generator_factory import make_generator
from editcredit.policy.static_generation import StaticCacheGenerator


@pytest.fixture(scope="module")
def model():
    return turn_policy(seed=3, num_heads=4, num_kv_heads=2)


def prompts_of(lengths, offset=0):
    return turn_prompts(lengths, offset, stride=5)


@pytest.mark.parametrize(
    "lengths",
    [
        [5, 9, 14],  # ragged
        [12],  # one row
        [7, 7, 7, 7, 20, 20],  # a task's samples share their first prompt
        [3, 40, 3, 11],
    ],
)
def test_multi_turn_samples_are_those_of_the_transformers_generator(model, lengths):
    static = StaticCacheGenerator(model, STOPS, PAD)
    reference = TransformersGenerator(model, STOPS, PAD)
    keys = [f"episode-{i}" for i in range(len(lengths))]
    prompts = prompts_of(lengths)
    ours = static.generate(prompts, 10, 1.0, seed=5, keys=keys)
    assert_same_samples(ours, reference.generate(prompts, 10, 1.0, seed=5, keys=keys))
    for turn in range(3):  # each turn extends the last by its reply and an observation
        observations = prompts_of([3 + (i + turn) % 4 for i in range(len(lengths))], 11 + turn)
        prompts = next_turn(prompts, ours, observations)
        ours = static.generate(prompts, 10, 0.8, seed=6 + turn, keys=keys)
        theirs = reference.generate(prompts, 10, 0.8, seed=6 + turn, keys=keys)
        assert_same_samples(ours, theirs)


def test_without_keys_nothing_is_kept_and_the_samples_match(model):
    static = StaticCacheGenerator(model, STOPS, PAD)
    prompts = prompts_of([6, 10, 4, 10])
    ours = static.generate(prompts, 8, 1.0, seed=9)
    assert_same_samples(ours, TransformersGenerator(model, STOPS, PAD).generate(prompts, 8, 1.0, 9))
    assert static._kept == {}


def test_a_reused_cache_buffer_with_stale_values_decodes_as_fresh_zeros(model):
    prompts = prompts_of([6, 13, 4, 9])
    fresh = StaticCacheGenerator(model, STOPS, PAD).generate(prompts, 12, 1.0, seed=4)
    reused = StaticCacheGenerator(model, STOPS, PAD)
    reused.generate(prompts_of([30, 2]), 12, 1.0, seed=1)  # a larger call first: the buffer
    memory = reused._memory
    memory.copy_(torch.randn(memory.shape, generator=torch.Generator().manual_seed(0)) * 1e3)
    ours = reused.generate(prompts, 12, 1.0, seed=4)
    assert reused._memory is memory  # the same buffer, its stale values under the new rows
    assert [o.token_ids for o in ours] == [o.token_ids for o in fresh]
    assert [o.logprobs for o in ours] == [o.logprobs for o in fresh]


def test_a_row_that_does_not_extend_its_kept_tokens_is_encoded_afresh(model):
    static = StaticCacheGenerator(model, STOPS, PAD)
    prompts = prompts_of([6, 10])
    out = static.generate(prompts, 8, 1.0, seed=2, keys=["a", "b"])
    extended = next_turn(prompts, out, prompts_of([3, 3], offset=5))
    mixed = [extended[0], prompts_of([9], offset=30)[0]]  # "b" asks for an unrelated prompt
    assert_same_samples(
        static.generate(mixed, 8, 1.0, seed=3, keys=["a", "b"]),
        TransformersGenerator(model, STOPS, PAD).generate(mixed, 8, 1.0, seed=3),
    )


def test_the_kept_rows_are_the_models_own_keys_for_the_tokens_read(model):
    static = StaticCacheGenerator(model, STOPS, PAD)
    prompts = prompts_of([5, 9, 13, 9])
    outputs = static.generate(prompts, 12, 1.0, seed=4, keys=[0, 1, 2, 3])
    last = max(len(o.token_ids) for o in outputs)
    for key, prompt, out in zip([0, 1, 2, 3], prompts, outputs, strict=True):
        row = static._kept[key]
        read = out.token_ids if len(out.token_ids) < last or last == 12 else out.token_ids[:-1]
        assert row.tokens == tuple(prompt + read)
        with torch.no_grad():
            cache = model(input_ids=torch.tensor([list(row.tokens)]), use_cache=True)
        for layer, (k, v) in enumerate(row.layers):
            hf = cache.past_key_values.layers[layer]
            torch.testing.assert_close(hf.keys[0], k, atol=1e-5, rtol=1e-4)
            torch.testing.assert_close(hf.values[0], v, atol=1e-5, rtol=1e-4)


def test_a_call_keeps_only_its_own_rows_and_release_drops_them(model):
    static = StaticCacheGenerator(model, STOPS, PAD)
    static.generate(prompts_of([5, 6]), 4, 1.0, seed=1, keys=["a", "b"])
    static.generate(prompts_of([7]), 4, 1.0, seed=1, keys=["c"])
    assert set(static._kept) == {"c"}
    static.release()
    assert static._kept == {}


def test_updated_weights_are_decoded_with_their_new_values():
    model = turn_policy(seed=3, num_heads=4, num_kv_heads=2)
    static = StaticCacheGenerator(model, STOPS, PAD)
    prompts = prompts_of([6, 8])
    static.generate(prompts, 6, 1.0, seed=1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    assert_same_samples(
        static.generate(prompts, 6, 1.0, seed=1),
        TransformersGenerator(model, STOPS, PAD).generate(prompts, 6, 1.0, seed=1),
    )


def test_bad_calls_and_other_architectures_are_refused(model):
    static = StaticCacheGenerator(model, STOPS, PAD)
    with pytest.raises(ValueError, match="2 keys for 1 prompts"):
        static.generate(prompts_of([5]), 4, 1.0, seed=1, keys=["a", "b"])
    with pytest.raises(ValueError, match="temperature must be > 0"):
        static.generate(prompts_of([5]), 4, 0.0, seed=1)
    assert static.generate([], 4, 1.0, seed=1) == []

    class Other(torch.nn.Module):
        config = type("Config", (), {"model_type": "gpt2"})()

    with pytest.raises(ValueError, match="decodes qwen2/llama models, not 'gpt2'"):
        StaticCacheGenerator(Other(), STOPS, PAD)


def test_the_factory_builds_it_by_name(model):
    gen = make_generator("static", "unused", "cpu", stop_ids=STOPS, pad_id=PAD, model=model)
    assert isinstance(gen, StaticCacheGenerator) and gen.model is model
