"""The one generation interface: token ids in, token ids and log-probs out.

``TransformersGenerator`` is the default backend (CPU or CUDA): batched, left-padded,
KV-cached sampling with a seeded ``torch.Generator``. Log-probs are those of the sampling
distribution (logits / temperature), recorded at sampling time for every generated token.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass(frozen=True)
class GenerationOutput:
    """One completion: the sampled ids (ending with a stop id when ``finished``) and their
    log-probs."""

    token_ids: list[int]
    logprobs: list[float]
    finished: bool


class Generator(Protocol):
    def generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]: ...


def stop_tuple(stop_ids: int | Sequence[int]) -> tuple[int, ...]:
    """The ids that end a turn (the chat template's end-of-turn token and the eos), as a tuple."""
    stops = (int(stop_ids),) if isinstance(stop_ids, int) else tuple(int(i) for i in stop_ids)
    if not stops:
        raise ValueError("a generator needs at least one stop id")
    return stops


class TransformersGenerator:
    """Sampling with a Hugging Face causal LM already on its device."""

    def __init__(self, model: torch.nn.Module, stop_ids: int | Sequence[int], pad_id: int) -> None:
        self.model = model
        self.stop_ids = stop_tuple(stop_ids)
        self.pad_id = pad_id
        # transformers renamed past_key_values to cache (5.x); support both spellings
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    def _forward(self, cache, **kwargs):
        """One cached forward: the last position's logits and the updated KV cache, passed and
        read under this transformers version's name (``cache``, formerly ``past_key_values``,
        which now warns on every call)."""
        if cache is not None:
            kwargs[self._cache_arg] = cache
        out = self.model(use_cache=True, **kwargs)
        new_cache = out.get("cache") if self._cache_arg == "cache" else out.past_key_values
        return out.logits[:, -1, :], new_cache

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.no_grad()
    def generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]:
        if not prompts:
            return []
        if temperature <= 0:
            raise ValueError("temperature must be > 0 (sampling with recorded log-probs)")
        device = self.device
        gen = torch.Generator(device=device)
        gen.manual_seed(seed)
        ids, mask, positions = left_padded(prompts, self.pad_id, device)
        was_training = self.model.training
        self.model.eval()
        logits, past = self._forward(
            None, input_ids=ids, attention_mask=mask, position_ids=positions
        )
        next_pos = positions[:, -1] + 1
        done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
        stops = torch.tensor(self.stop_ids, dtype=torch.long, device=device)
        tokens: list[torch.Tensor] = []
        logps: list[torch.Tensor] = []
        for _ in range(max_new_tokens):
            logp = torch.log_softmax(logits.float() / temperature, dim=-1)
            sample = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(-1)
            sample = torch.where(done, torch.full_like(sample, self.pad_id), sample)
            tokens.append(sample)
            logps.append(logp.gather(-1, sample[:, None]).squeeze(-1))
            done = done | (sample[:, None] == stops[None, :]).any(-1)
            if bool(done.all()):
                break
            mask = torch.cat([mask, (~done).long()[:, None] | 1], dim=-1)
            logits, past = self._forward(
                past,
                input_ids=sample[:, None],
                attention_mask=mask,
                position_ids=next_pos[:, None],
            )
            next_pos = next_pos + 1
        self.model.train(was_training)
        return self._collect(tokens, logps)

    def _collect(self, tokens, logps) -> list[GenerationOutput]:
        if not tokens:
            return []
        return collect_outputs(torch.stack(tokens, dim=1), torch.stack(logps, dim=1), self.stop_ids)


def left_padded(
    prompts: list[list[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Prompts left-padded to one width: ids, the attention mask (1 on prompt tokens) and each
    token's position inside its own prompt (0 on padding)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def collect_outputs(
    tokens: torch.Tensor, logps: torch.Tensor, stop_ids: Sequence[int]
) -> list[GenerationOutput]:
    """[B, T] sampled ids and their log-probs -> one output per row, cut after its first stop
    id."""
    stops = set(stop_ids)
    results = []
    for row_ids, row_lp in zip(tokens.cpu().tolist(), logps.float().cpu().tolist(), strict=True):
        ids, lps, finished = [], [], False
        for t, p in zip(row_ids, row_lp, strict=True):
            ids.append(t)
            lps.append(p)
            if t in stops:
                finished = True
                break
        results.append(GenerationOutput(ids, lps, finished))
    return results
