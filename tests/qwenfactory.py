"""A stock Qwen2-architecture HF directory, built here without the network: random weights, a
byte-level BPE tokenizer with Qwen2's special tokens (``<|endoftext|>``, ``<|im_start|>``,
``<|im_end|>``) and the standard Qwen2.5-Instruct chat template (ChatML, ``<tool_call>`` JSON
tool calls, tool results as ``<tool_response>`` in a user turn). Nothing of the project's chat
layer is in it."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

QWEN25_CHAT_TEMPLATE = (Path(__file__).parent / "qwen2.5-instruct-chat-template.jinja").read_text()
"""The standard Qwen2.5-Instruct chat template, as its tokenizer_config.json carries it."""

QWEN2_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_TEXTS = [
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
    "def add(a, b):\n    return a + b\n",
    "tests: 4 passed, 1 failed\nFAILED test_calc.py::test_add",
    '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
    "edit calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE",
]


def write_stock_qwen2(
    out: Path,
    vocab_size: int = 600,
    seed: int = 0,
    texts: list[str] | None = None,
    hidden_size: int = 32,
    num_layers: int = 1,
) -> Path:
    """Write the directory to ``out``: config.json, generation_config.json, model.safetensors,
    tokenizer.json and a tokenizer_config.json of the stock Qwen2.5-Instruct shape. ``texts``:
    more text the tokenizer's merges are learned from."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator((_TEXTS + (texts or [])) * 10, trainer=trainer)
    tok.add_special_tokens(QWEN2_SPECIAL)  # appended after the vocabulary, as in Qwen2's
    tok.save(str(out / "tokenizer.json"))
    ids = {t: tok.token_to_id(t) for t in QWEN2_SPECIAL}
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "Qwen2Tokenizer",
                "bos_token": None,
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "unk_token": None,
                "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
                "errors": "replace",
                "model_max_length": 32768,
                "split_special_tokens": False,
                "clean_up_tokenization_spaces": False,
                "chat_template": QWEN25_CHAT_TEMPLATE,
            },
            indent=2,
        )
    )
    config = Qwen2Config(
        vocab_size=tok.get_vocab_size(),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
    )
    torch.manual_seed(seed)
    Qwen2ForCausalLM(config).save_pretrained(str(out), safe_serialization=True)
    (out / "generation_config.json").write_text(
        json.dumps(
            {
                "bos_token_id": ids["<|endoftext|>"],
                "eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]],
                "pad_token_id": ids["<|endoftext|>"],
                "do_sample": True,
                "temperature": 0.7,
                "top_p": 0.8,
            },
            indent=2,
        )
    )
    return out
