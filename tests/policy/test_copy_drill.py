"""Copy drills (policy.copy_drill): the spans are cut from the context, only they carry loss,
and drills are a pure function of texts, tokenizer and seed; SFT runs its drill steps."""

from __future__ import annotations

import random

import pytest
import torch

from editcredit.policy.copy_drill import code_lines, copy_drill, copy_drills

SEP, NL = 1, 0


def encode(text: str) -> list[int]:
    return [ord(ch) for ch in text]


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        (["a\n\nb\n  \nc"], ["a", "b", "c"]),
        (["x = 1\ny", "y\nx = 1\nz"], ["x = 1", "y", "z"]),
        ([""], []),
    ],
)
def test_code_lines_are_distinct_and_non_blank_in_first_seen_order(observations, expected):
    assert code_lines(observations) == expected


def test_every_span_is_a_slice_of_the_context_and_only_spans_carry_loss():
    lines = ["def f(a):", "    return a + 1", "total = 0"]
    ids, mask = copy_drill(
        lines, encode, SEP, NL, random.Random(5), context_tokens=40, spans=5, span_tokens=(2, 6)
    )
    cut = ids.index(SEP)
    context = ids[:cut]
    assert len(context) == 40 and mask[: cut + 1] == [0] * (cut + 1)
    assert all(m == 1 for m in mask[cut + 1 :])
    spans = ids[cut + 1 :]
    pieces, current = [], []
    for token in spans:  # each span ends with its newline (a newline inside one is copied too)
        current.append(token)
        if token == NL and len(current) > 1 and 2 <= len(current) - 1 <= 6:
            pieces.append(current[:-1])
            current = []
    assert len(pieces) == 5
    for piece in pieces:
        assert any(context[i : i + len(piece)] == piece for i in range(len(context)))


def test_drills_are_a_function_of_texts_and_seed():
    obs = ["def f(a):\n    return a + 1", "def g(b):\n    return b * 2"]
    assert copy_drills(obs, encode, SEP, NL, 4, 7) == copy_drills(obs, encode, SEP, NL, 4, 7)
    assert copy_drills(obs, encode, SEP, NL, 4, 7) != copy_drills(obs, encode, SEP, NL, 4, 8)


def test_no_lines_is_one_clear_error():
    with pytest.raises(ValueError, match="at least one line"):
        copy_drills(["\n \n"], encode, SEP, NL, 1, 0)


def test_drill_steps_need_drills_and_run_before_the_episodes():
    from policyfactory import sft_config, tiny_qwen2

    from editcredit.policy.sft import train_sft

    model = tiny_qwen2(vocab_size=128)
    episodes = [([5, 6, 7, 8], [0, 0, 1, 1])] * 4
    cfg = sft_config(batch_size=2, max_steps=3, warmup_steps=1, copy_steps=2, copy_rows=1)
    with pytest.raises(ValueError, match="copy drills"):
        train_sft(model, episodes, 0, cfg, torch.device("cpu"))
    drills = copy_drills(["def f(a):\n    return a"], encode, SEP, NL, 8, 0)
    drills = [([t % 128 for t in ids], mask) for ids, mask in drills]
    stats = train_sft(model, episodes, 0, cfg, torch.device("cpu"), drills=drills)
    assert stats["steps"] == 5
