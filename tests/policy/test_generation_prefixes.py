"""Multi-turn generation encodes only each turn's new tokens: a kept row's keys and values stand
for the prompt it extends, and the samples are those of a fresh encoding of the whole prompt."""

from __future__ import annotations

import pytest
import torch
from policyfactory import TURN_PAD as PAD
from policyfactory import TURN_STOPS as STOPS
from policyfactory import assert_same_samples, next_turn, turn_policy, turn_prompts

from editcredit.policy.generation import TransformersGenerator


@pytest.fixture(scope="module")
def model():
    return turn_policy(seed=1)


def prompts_of(lengths, offset=0):
    return turn_prompts(lengths, offset)


class FirstWidth:
    """Records the width of each call's first forward (the tokens it encodes per row)."""

    def __init__(self, gen: TransformersGenerator) -> None:
        self.widths: list[int] = []
        forward = gen._forward

        def recorded(cache, **kwargs):
            if kwargs["input_ids"].size(1) > 1 or cache is None:
                self.widths.append(int(kwargs["input_ids"].size(1)))
            return forward(cache, **kwargs)

        gen._forward = recorded


@pytest.mark.parametrize("lengths", [[5, 9, 14], [12], [3, 3, 20, 7]])
def test_kept_rows_encode_only_new_tokens_and_sample_as_a_fresh_encoding(model, lengths):
    kept, fresh = (TransformersGenerator(model, STOPS, PAD) for _ in range(2))
    width = FirstWidth(kept)
    keys = [f"episode-{i}" for i in range(len(lengths))]
    prompts = prompts_of(lengths)
    first = kept.generate(prompts, 10, 1.0, seed=5, keys=keys)
    assert_same_samples(first, fresh.generate(prompts, 10, 1.0, seed=5))
    observations = prompts_of([4 + i for i in range(len(lengths))], offset=11)
    for turn in range(2):  # two more turns, each extending the last
        prompts = next_turn(prompts, first, observations)
        first = kept.generate(prompts, 10, 1.0, seed=6 + turn, keys=keys)
        assert_same_samples(first, fresh.generate(prompts, 10, 1.0, seed=6 + turn))
        # each row encodes its observation and at most the one sampled id the model never read
        assert width.widths[-1] <= max(len(o) for o in observations) + 1
        assert width.widths[-1] < min(len(p) for p in prompts)


def test_a_row_that_does_not_extend_its_kept_tokens_is_encoded_afresh(model):
    kept, fresh = (TransformersGenerator(model, STOPS, PAD) for _ in range(2))
    prompts = prompts_of([6, 10])
    out = kept.generate(prompts, 8, 1.0, seed=2, keys=["a", "b"])
    extended = next_turn(prompts, out, prompts_of([3, 3], offset=5))
    other = prompts_of([9], offset=30)[0]  # key "b" now asks for an unrelated prompt
    mixed = [extended[0], other]
    assert_same_samples(
        kept.generate(mixed, 8, 1.0, seed=3, keys=["a", "b"]),
        fresh.generate(mixed, 8, 1.0, seed=3),
    )


def test_without_reuse_the_samples_are_bitwise_those_without_keys(model):
    kept, fresh = (TransformersGenerator(model, STOPS, PAD) for _ in range(2))
    prompts = prompts_of([6, 10, 4])
    a = kept.generate(prompts, 8, 1.0, seed=9, keys=[1, 2, 3])
    b = fresh.generate(prompts, 8, 1.0, seed=9)
    assert [o.logprobs for o in a] == [o.logprobs for o in b]


def test_release_drops_every_kept_row(model):
    gen = TransformersGenerator(model, STOPS, PAD)
    width = FirstWidth(gen)
    prompts = prompts_of([8, 8])
    out = gen.generate(prompts, 6, 1.0, seed=1, keys=["a", "b"])
    gen.release()
    longer = next_turn(prompts, out, prompts_of([2, 2]))
    gen.generate(longer, 6, 1.0, seed=1, keys=["a", "b"])
    assert width.widths[-1] == max(len(p) for p in longer)


def test_a_call_keeps_only_its_own_rows(model):
    gen = TransformersGenerator(model, STOPS, PAD)
    gen.generate(prompts_of([5, 6]), 4, 1.0, seed=1, keys=["a", "b"])
    gen.generate(prompts_of([7]), 4, 1.0, seed=1, keys=["c"])
    assert set(gen._kept) == {"c"}
    gen.generate(prompts_of([7]), 4, 1.0, seed=1)
    assert gen._kept == {}


def test_keys_must_match_the_prompts(model):
    gen = TransformersGenerator(model, STOPS, PAD)
    with pytest.raises(ValueError, match="2 keys for 1 prompts"):
        gen.generate(prompts_of([5]), 4, 1.0, seed=1, keys=["a", "b"])


def test_the_kept_tokens_are_the_prompt_and_the_ids_the_model_read(model):
    gen = TransformersGenerator(model, STOPS, PAD)
    prompts = prompts_of([5, 9, 13])
    outputs = gen.generate(prompts, 12, 1.0, seed=4, keys=[0, 1, 2])
    last = max(len(o.token_ids) for o in outputs)
    for key, prompt, out in zip([0, 1, 2], prompts, outputs, strict=True):
        row = gen._kept[key]
        read = out.token_ids if len(out.token_ids) < last or last == 12 else out.token_ids[:-1]
        assert row.tokens == tuple(prompt + read)
        for k, v in row.layers:
            assert k.shape[1] == v.shape[1] == len(row.tokens)
    with torch.no_grad():  # the kept keys are the model's own for those tokens
        ids = torch.tensor([list(gen._kept[0].tokens)])
        cache = model(input_ids=ids, use_cache=True).past_key_values
    torch.testing.assert_close(
        cache.layers[0].keys[0], gen._kept[0].layers[0][0], atol=1e-5, rtol=1e-4
    )
