"""Token-level chat layout. Assistant tokens are kept as sampled; only observations are encoded.

    <|bos|> <|user|> obs_0 <|assistant|> act_0 <|eos|> <|user|> obs_1 <|assistant|> act_1 <|eos|>

The loss covers the assistant's tokens and its closing <|eos|>.
"""

from __future__ import annotations

SPECIAL_TOKENS = ("<|pad|>", "<|bos|>", "<|eos|>", "<|user|>", "<|assistant|>")
PAD, BOS, EOS, USER, ASSISTANT = SPECIAL_TOKENS


class ChatIds:
    """The ids of the special tokens for one tokenizer."""

    def __init__(self, tokenizer) -> None:
        ids = tokenizer.convert_tokens_to_ids(list(SPECIAL_TOKENS))
        if any(i is None or i == tokenizer.unk_token_id for i in ids):
            raise ValueError(f"tokenizer lacks the chat special tokens {SPECIAL_TOKENS}")
        self.pad, self.bos, self.eos, self.user, self.assistant = ids
        self.tokenizer = tokenizer

    def encode_text(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def observation_ids(self, text: str, first: bool) -> list[int]:
        """``[<|bos|>] <|user|> text <|assistant|>``: the ids before an assistant turn."""
        head = [self.bos] if first else []
        return [*head, self.user, *self.encode_text(text), self.assistant]

    def decode_action(self, ids: list[int]) -> str:
        body = [i for i in ids if i != self.eos and i != self.pad]
        return self.tokenizer.decode(body, skip_special_tokens=False)
