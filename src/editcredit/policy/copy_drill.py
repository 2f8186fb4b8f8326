"""Copy drills: short synthetic sequences that teach the tiny LM to copy from its context.

The policy's edits quote fragments of code on screen (the minibugs action language), but a
small model fitted on a few hundred expert episodes learns to recall its training functions
instead of reading the screen (docs/base-policy.md). A drill makes copying the only way to a
low loss: a context of code lines drawn at random from the corpus's observations (shuffled
across episodes, so no function is whole), a separator, then spans cut from that context at
random, each followed by a newline. The loss is on the spans only: their first token teaches
"a token from the context", the rest "what followed it there" (an induction head's job).
Drills are a pure function of the corpus texts, the tokenizer and a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

Encode = Callable[[str], list[int]]


def code_lines(observations: Sequence[str]) -> list[str]:
    """The distinct non-blank lines of the observations, in first-seen order."""
    seen: dict[str, None] = {}
    for text in observations:
        for line in text.split("\n"):
            if line.strip():
                seen.setdefault(line, None)
    return list(seen)


def copy_drill(
    lines: Sequence[str],
    encode: Encode,
    separator: int,
    newline: int,
    rng: random.Random,
    *,
    context_tokens: int = 192,
    spans: int = 6,
    span_tokens: tuple[int, int] = (2, 10),
) -> tuple[list[int], list[int]]:
    """One drill as (token ids, loss mask): random ``lines`` up to ``context_tokens`` tokens,
    ``separator``, then ``spans`` random token spans of the context (lengths drawn from
    ``span_tokens``, inclusive), each closed by ``newline``; the mask is 1 on the spans and
    their newlines."""
    if not lines:
        raise ValueError("copy drills need at least one line of code")
    context: list[int] = []
    while len(context) < context_tokens:
        context += encode(rng.choice(lines)) + [newline]
    context = context[:context_tokens]
    ids, mask = [*context, separator], [0] * (len(context) + 1)
    low, high = span_tokens
    for _ in range(spans):
        size = min(rng.randint(low, high), len(context))
        start = rng.randrange(len(context) - size + 1)
        span = [*context[start : start + size], newline]
        ids += span
        mask += [1] * len(span)
    return ids, mask


def copy_drills(
    observations: Sequence[str],
    encode: Encode,
    separator: int,
    newline: int,
    count: int,
    seed: int,
) -> list[tuple[list[int], list[int]]]:
    """``count`` drills from the code lines of ``observations`` (seeded, deterministic)."""
    lines = code_lines(observations)
    rng = random.Random(f"{seed}:copy-drills")
    return [copy_drill(lines, encode, separator, newline, rng) for _ in range(count)]
