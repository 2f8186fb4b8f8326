"""Train a byte-level BPE tokenizer with `tokenizers`, saved as a PreTrainedTokenizerFast with a
Qwen-style ChatML chat template (``<|im_start|>role\n...<|im_end|>\n``) and Qwen2's special
tokens, so the tiny default is played through the same chat layer as a stock Qwen2 model
(:mod:`editcredit.policy.chat`)."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)
from transformers import PreTrainedTokenizerFast

ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (ENDOFTEXT, IM_START, IM_END)
"""Qwen2's: ``<|endoftext|>`` pads, ``<|im_end|>`` ends a turn (and is the eos)."""

CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
"""ChatML without a tool-call format: observations are user turns, actions plain text."""

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def whole_number_tokens(below: int) -> list[AddedToken]:
    """The numbers 10 .. ``below`` - 1 as tokens of their own (none when ``below`` <= 10)."""
    return [AddedToken(str(n), normalized=False) for n in range(10, max(10, below))]


def train_tokenizer(
    texts: Iterable[str], vocab_size: int, whole_numbers_below: int = 0
) -> PreTrainedTokenizerFast:
    """Byte-level BPE over ``texts``; deterministic for the same texts and settings.

    ``whole_numbers_below``: the numbers 10 up to it are added tokens, matched in the text
    before the pre-tokenizer (left to right, so ``123`` reads ``12``, ``3``). A candidate's
    number in ``try 12`` is then one token and the end of the action follows it for certain;
    digit by digit, the policy must decide after ``try 1`` whether the number goes on, and at
    T = 1 it runs on into text that is no action. Added tokens are stored in
    ``tokenizer.json``, so AutoTokenizer reads them as training did."""
    tok = Tokenizer(models.BPE())
    # The Qwen2 pre-tokenization (digits one by one, so a number is spelled the same wherever
    # it appears). It must equal what AutoTokenizer rebuilds for a qwen2 checkpoint, or a
    # model loaded the standard way would read other tokens than it was trained on.
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_tokens(whole_number_tokens(whole_numbers_below))
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=IM_END,
        pad_token=ENDOFTEXT,
        additional_special_tokens=[IM_START],
        model_max_length=4096,
        clean_up_tokenization_spaces=False,
        chat_template=CHATML_TEMPLATE,
    )
