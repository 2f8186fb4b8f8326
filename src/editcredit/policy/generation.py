"""The one generation interface: token ids in, token ids and log-probs out.

``TransformersGenerator`` is the default backend (CPU or CUDA): batched, left-padded,
KV-cached sampling with a seeded ``torch.Generator``. Log-probs are those of the sampling
distribution (logits / temperature), recorded at sampling time for every generated token.

A multi-turn episode's next prompt extends its last one (the sampled reply, then the
observation). Given ``keys`` (one per row), ``TransformersGenerator`` keeps each row's keys and
values after a call and, when the same key's next prompt starts with the tokens they cover,
encodes only the new tokens: the prompt is not encoded again every turn. ``release`` drops
what is kept (the rollout loop calls it before its first turn and after its last, so nothing
carries over between batches of episodes or between weight updates).
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Sequence
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


@dataclass(frozen=True)
class KeptRow:
    """One row's keys and values after a call: ``layers[l]`` is that layer's (keys, values),
    each [kv_heads, len(tokens), head_dim], for the token ids ``tokens`` (the prompt and the
    sampled ids the model read)."""

    tokens: tuple[int, ...]
    layers: tuple[tuple[torch.Tensor, torch.Tensor], ...]

    def reusable_for(self, prompt: list[int]) -> int:
        """How many of ``prompt``'s tokens these keys and values stand for: all they cover when
        the prompt extends them by at least one token, else 0 (encoded afresh)."""
        n = len(self.tokens)
        return n if n < len(prompt) and tuple(prompt[:n]) == self.tokens else 0


def refuse_bad_request(
    prompts: list[list[int]], temperature: float, keys: Sequence[Hashable] | None
) -> None:
    """A ValueError for a call no generator can answer: keys that are not one per prompt, or
    prompts to sample at a temperature that is not positive."""
    if keys is not None and len(keys) != len(prompts):
        raise ValueError(f"{len(keys)} keys for {len(prompts)} prompts")
    if prompts and temperature <= 0:
        raise ValueError("temperature must be > 0 (sampling with recorded log-probs)")


def kept_rows(
    kept: dict[Hashable, KeptRow], keys: Sequence[Hashable] | None, prompts: list[list[int]]
) -> tuple[list[KeptRow | None], list[int]]:
    """Each prompt's kept row (None without one) and how many of its tokens that row stands
    for (0: encoded afresh)."""
    rows: list[KeptRow | None] = (
        [kept.get(k) for k in keys] if keys is not None else [None] * len(prompts)
    )
    return rows, [row.reusable_for(p) if row else 0 for row, p in zip(rows, prompts, strict=True)]


def draw(
    logits: torch.Tensor,
    temperature: float,
    gen: torch.Generator,
    done: torch.Tensor,
    stops: torch.Tensor,
    pad_id: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One sampling step over [B, V] logits: each row's sample (the pad id once its row is
    done), its log-prob under logits / temperature, and which rows are done after it."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    sample = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(-1)
    sample = torch.where(done, torch.full_like(sample, pad_id), sample)
    done = done | (sample[:, None] == stops[None, :]).any(-1)
    return sample, logp.gather(-1, sample[:, None]).squeeze(-1), done


def stop_tuple(stop_ids: int | Sequence[int]) -> tuple[int, ...]:
    """The ids that end a turn (the chat template's end-of-turn token and the eos), as a tuple."""
    stops = (int(stop_ids),) if isinstance(stop_ids, int) else tuple(int(i) for i in stop_ids)
    if not stops:
        raise ValueError("a generator needs at least one stop id")
    return stops


class TransformersGenerator:
    """Sampling with a Hugging Face causal LM already on its device."""

    #: ``generate(..., keys=)`` reuses each key's keys and values on its next prompt
    keeps_prefixes = True

    def __init__(self, model: torch.nn.Module, stop_ids: int | Sequence[int], pad_id: int) -> None:
        self.model = model
        self.stop_ids = stop_tuple(stop_ids)
        self.pad_id = pad_id
        # transformers renamed past_key_values to cache (5.x); support both spellings
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        # the last position's logits alone (the only ones sampled from), where the model can
        self._last_only = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        self._kept: dict[Hashable, KeptRow] = {}

    def release(self) -> None:
        """Drop every row kept by earlier calls."""
        self._kept = {}

    def _forward(self, cache, **kwargs):
        """One cached forward: the last position's logits and the updated KV cache, passed and
        read under this transformers version's name (``cache``, formerly ``past_key_values``,
        which now warns on every call)."""
        if cache is not None:
            kwargs[self._cache_arg] = cache
        out = self.model(use_cache=True, **self._last_only, **kwargs)
        new_cache = out.get("cache") if self._cache_arg == "cache" else out.past_key_values
        return out.logits[:, -1, :], new_cache

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.no_grad()
    def generate(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        seed: int,
        keys: Sequence[Hashable] | None = None,
    ) -> list[GenerationOutput]:
        """Sample a reply to each prompt. With ``keys`` (one per prompt), a row whose key the
        previous call kept, and whose prompt extends the tokens kept, encodes only its new
        tokens; afterwards exactly this call's rows are kept."""
        refuse_bad_request(prompts, temperature, keys)
        if not prompts:
            self.release()
            return []
        device = self.device
        gen = torch.Generator(device=device)
        gen.manual_seed(seed)
        kept, reused = kept_rows(self._kept, keys, prompts)
        self.release()
        was_training = self.model.training
        self.model.eval()
        cache, mask, ids, positions = self._prefill_inputs(prompts, kept, reused, device)
        logits, past = self._forward(
            cache, input_ids=ids, attention_mask=mask, position_ids=positions
        )
        prompt_mask = mask
        next_pos = positions[:, -1] + 1
        done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
        stops = torch.tensor(self.stop_ids, dtype=torch.long, device=device)
        tokens: list[torch.Tensor] = []
        logps: list[torch.Tensor] = []
        for _ in range(max_new_tokens):
            sample, logp, done = draw(logits, temperature, gen, done, stops, self.pad_id)
            tokens.append(sample)
            logps.append(logp)
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
        outputs = self._collect(tokens, logps)
        if keys is not None:
            read = mask.size(1) - prompt_mask.size(1)  # sampled ids the model read, per row
            self._keep(keys, prompts, outputs, past, prompt_mask, read)
        return outputs

    def _prefill_inputs(self, prompts, kept, reused, device):
        """The first forward's cache, attention mask, ids and positions: each row's prompt
        left-padded, after its kept keys and values (left-padded in turn) where it has any."""
        suffixes = [p[n:] for p, n in zip(prompts, reused, strict=True)]
        ids, mask, positions = left_padded(suffixes, self.pad_id, device)
        width = max(reused)
        if width == 0:
            return None, mask, ids, positions
        first = next(row for row, n in zip(kept, reused, strict=True) if n)
        layers = []
        for layer, (k0, v0) in enumerate(first.layers):
            shape = (len(prompts), k0.size(0), width, k0.size(-1))
            k = torch.zeros(shape, dtype=k0.dtype, device=k0.device)
            v = torch.zeros(shape, dtype=v0.dtype, device=v0.device)
            for i, (row, n) in enumerate(zip(kept, reused, strict=True)):
                if n:
                    k[i, :, width - n :] = row.layers[layer][0]
                    v[i, :, width - n :] = row.layers[layer][1]
            layers.append((k, v))
        past_mask = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        for i, n in enumerate(reused):
            past_mask[i, width - n :] = 1
        offsets = torch.tensor(reused, dtype=torch.long, device=device)[:, None]
        from transformers import DynamicCache

        cache = DynamicCache(ddp_cache_data=layers)
        return cache, torch.cat([past_mask, mask], dim=-1), ids, positions + offsets

    def _keep(self, keys, prompts, outputs, past, prompt_mask, read) -> None:
        """Keep each row's keys and values for the prompt and the sampled ids it read."""
        layers = [(layer.keys, layer.values) for layer in past.layers]
        width = prompt_mask.size(1)
        for i, (key, prompt, out) in enumerate(zip(keys, prompts, outputs, strict=True)):
            n = min(len(out.token_ids), read)
            cols = torch.cat(
                [
                    prompt_mask[i].nonzero().squeeze(-1),
                    torch.arange(width, width + n, device=prompt_mask.device),
                ]
            )
            rows = tuple((k[i, :, cols].clone(), v[i, :, cols].clone()) for k, v in layers)
            self._kept[key] = KeptRow(tuple(prompt) + tuple(out.token_ids[:n]), rows)

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
