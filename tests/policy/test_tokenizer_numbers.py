"""Whole numbers as tokens of their own (``models.tiny.tokenizer_whole_numbers_below``)."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from editcredit.policy.tokenizer import train_tokenizer

TEXTS = [
    "def f(x):\n    return x + 12\n",
    "candidate fixes (try <k>):\n1: @3 < -> <=\n12: @7 + -> -",
    "try 12",
    "tests: 74 passed, 3 failed",
] * 20


@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    tok = train_tokenizer(TEXTS, 300, whole_numbers_below=100)
    out = tmp_path_factory.mktemp("numbered")
    tok.save_pretrained(str(out))
    return tok, AutoTokenizer.from_pretrained(str(out))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("try 12", ["try", "Ġ", "12"]),
        ("try 7", ["try", "Ġ", "7"]),
        ("try 99", ["try", "Ġ", "99"]),
        ("x = 100", ["x", "Ġ", "=", "Ġ", "10", "0"]),
        ("arr[17]", None),  # the number is one token wherever it stands
        ("v1.2.3", None),
    ],
)
def test_numbers_below_the_bound_are_one_token_and_read_back_the_same(numbered, text, tokens):
    trained, auto = numbered
    ids = trained.encode(text, add_special_tokens=False)
    pieces = trained.convert_ids_to_tokens(ids)
    if tokens is not None:
        assert pieces == tokens
    assert "17" in pieces or "17" not in text
    assert auto.encode(text, add_special_tokens=False) == ids  # the standard loader agrees
    assert auto.decode(ids) == text


def test_without_the_option_numbers_are_spelled_digit_by_digit():
    plain = train_tokenizer(TEXTS, 300)
    ids = plain.encode("try 12", add_special_tokens=False)
    assert plain.convert_ids_to_tokens(ids)[-2:] == ["1", "2"]
    numbered = train_tokenizer(TEXTS, 300, whole_numbers_below=100)
    assert len(numbered) == len(plain) + 90
