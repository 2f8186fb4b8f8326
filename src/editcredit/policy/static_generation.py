"""Generation over a static KV cache: each distinct prompt encoded alone, every row decoded
together.

``TransformersGenerator`` left-pads a call's prompts to one width and encodes them as one
batch. A multi-turn episode's prompts range from a few hundred to two thousand tokens, so most
of that batch is padding (and attention grows with the square of its width), and its cache
grows by concatenation, so each new token copies the whole cache. Here each distinct prompt is
encoded alone, after its kept keys and values (no padding; the samples of a task share their
first prompt, encoded once), its keys and values are placed into one preallocated cache of the
call's rows, and every row then decodes one token per step over that cache, written in place.

The interface, the sampler and the seeds are ``TransformersGenerator``'s
(:func:`~editcredit.policy.generation.draw`), and so are the kept rows between turns: the
samples are the same but where floating-point sums in another order flip one
(``tests/policy/test_static_generation.py``). The decoder is
:class:`~editcredit.policy.fast_decode.Qwen2Decoder` (Qwen2 and Llama configs), run eagerly.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import torch

from editcredit.policy.fast_decode import FusedWeights, Qwen2Decoder
from editcredit.policy.generation import (
    GenerationOutput,
    KeptRow,
    collect_outputs,
    draw,
    kept_rows,
    refuse_bad_request,
    stop_tuple,
)


class StaticCacheGenerator:
    """Sampling with a Qwen2/Llama causal LM already on its device (``generation.backend:
    static``)."""

    #: ``generate(..., keys=)`` reuses each key's keys and values on its next prompt
    keeps_prefixes = True

    def __init__(self, model: torch.nn.Module, stop_ids: int | Sequence[int], pad_id: int) -> None:
        model_type = getattr(model.config, "model_type", "")
        if model_type not in ("qwen2", "llama"):
            raise ValueError(
                f"generation.backend 'static' decodes qwen2/llama models, not {model_type!r} "
                "(use generation.backend: transformers)"
            )
        self.model = model
        self.stop_ids = stop_tuple(stop_ids)
        self.pad_id = pad_id
        self._fused: FusedWeights | None = None
        self._kept: dict[Hashable, KeptRow] = {}
        self._memory: torch.Tensor | None = None  # the batch cache's, reused call after call

    def release(self) -> None:
        """Drop every row kept by earlier calls."""
        self._kept = {}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def generate(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        seed: int,
        keys: Sequence[Hashable] | None = None,
    ) -> list[GenerationOutput]:
        """Sample a reply to each prompt; with ``keys``, as ``TransformersGenerator.generate``.
        Decodes in the model's own dtype (an enclosing autocast is switched off)."""
        refuse_bad_request(prompts, temperature, keys)
        if not prompts:
            self.release()
            return []
        device = self.device
        with torch.no_grad(), torch.autocast(device.type, enabled=False):
            return self._generate(prompts, max_new_tokens, temperature, seed, keys, device)

    def _fused_weights(self) -> FusedWeights:
        """The decoder's concatenated projections, refreshed from the model's current weights
        (a policy may be updated between calls)."""
        if self._fused is None:
            self._fused = FusedWeights(self.model)
        else:
            self._fused.refresh()
        return self._fused

    def _generate(self, prompts, max_new_tokens, temperature, seed, keys, device):
        gen = torch.Generator(device=device)
        gen.manual_seed(seed)
        kept, reused = kept_rows(self._kept, keys, prompts)
        self.release()
        fused = self._fused_weights()
        width = max(len(p) for p in prompts)
        decoder = Qwen2Decoder(
            self.model,
            len(prompts),
            width + max_new_tokens,
            fused,
            memory=self._cache_memory(len(prompts), width + max_new_tokens, device),
        )
        logits, valid = self._prefill(decoder, fused, prompts, kept, reused, width)
        positions = torch.tensor([[len(p)] for p in prompts], device=device)
        done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
        stops = torch.tensor(self.stop_ids, dtype=torch.long, device=device)
        tokens: list[torch.Tensor] = []
        logps: list[torch.Tensor] = []
        column = width
        for _ in range(max_new_tokens):
            sample, logp, done = draw(logits, temperature, gen, done, stops, self.pad_id)
            tokens.append(sample)
            logps.append(logp)
            if bool(done.all()):
                break
            logits, new_k, new_v = decoder.decode(sample[:, None], positions, valid)
            at = torch.tensor([column], device=device)
            decoder.k_cache.index_copy_(3, at, new_k)
            decoder.v_cache.index_copy_(3, at, new_v)
            valid[:, column] = True
            column += 1
            positions = positions + 1
        outputs = collect_outputs(torch.stack(tokens, 1), torch.stack(logps, 1), self.stop_ids)
        if keys is not None:
            self._keep(decoder, keys, prompts, outputs, width, read=column - width)
        return outputs

    def _cache_memory(self, batch: int, max_len: int, device: torch.device) -> torch.Tensor:
        """A flat buffer for ``batch`` rows of ``max_len`` columns: the last call's when it is
        large enough (its stale values are finite), else a larger one of zeros (allocating
        and zeroing a fresh cache at every call cost as much as decoding in it)."""
        need = Qwen2Decoder.cache_elements(self.model, batch, max_len)
        dtype = next(self.model.parameters()).dtype
        memory = self._memory
        if memory is None or memory.numel() < need or memory.dtype != dtype:
            memory = torch.zeros(need + need // 2, dtype=dtype, device=device)  # room to grow
            self._memory = memory
        return memory

    def _prefill(self, decoder, fused, prompts, kept, reused, width):
        """Encode each distinct prompt alone (after its kept keys and values) and place it
        right-aligned at ``width`` in ``decoder``'s cache: the last position's logits of every
        row [B, V] and the columns each row attends to [B, width + new]."""
        device = decoder.device
        valid = torch.zeros((len(prompts), decoder.max_len), dtype=torch.bool, device=device)
        logits: list[torch.Tensor] = []
        first_row: dict[tuple[tuple[int, ...], int], int] = {}
        for i, (prompt, row, n) in enumerate(zip(prompts, kept, reused, strict=True)):
            start = width - len(prompt)
            same = first_row.setdefault((tuple(prompt), n), i)
            if same == i:
                last, keys, values = self._encode(fused, prompt, row, n)
                decoder.k_cache[:, i, :, start:width] = keys
                decoder.v_cache[:, i, :, start:width] = values
                logits.append(last)
            else:  # the same prompt after the same kept tokens: the same keys and values
                decoder.k_cache[:, i] = decoder.k_cache[:, same]
                decoder.v_cache[:, i] = decoder.v_cache[:, same]
                logits.append(logits[same])
            valid[i, start:width] = True
        return torch.stack(logits), valid

    def _encode(self, fused, prompt, row, n):
        """One prompt's last logits [V] and keys and values [layers, kv, len, hd], its first
        ``n`` tokens read from ``row``."""
        one = Qwen2Decoder(self.model, 1, len(prompt), fused)
        if n:
            for layer, (k, v) in enumerate(row.layers):
                one.k_cache[layer, 0, :, :n] = k
                one.v_cache[layer, 0, :, :n] = v
        device = one.device
        ids = torch.tensor([prompt[n:]], dtype=torch.long, device=device)
        positions = torch.arange(n, len(prompt), device=device)[None]
        everything = torch.ones((1, len(prompt)), dtype=torch.bool, device=device)
        last = one.forward(ids, positions, torch.tensor(n, device=device), everything)
        return last[0], one.k_cache[:, 0], one.v_cache[:, 0]

    def _keep(self, decoder, keys, prompts, outputs, width, read) -> None:
        """Keep each row's keys and values for its prompt and the sampled ids it read."""
        layers = decoder.k_cache.size(0)
        for i, (key, prompt, out) in enumerate(zip(keys, prompts, outputs, strict=True)):
            n = min(len(out.token_ids), read)
            cols = slice(width - len(prompt), width + n)
            self._kept[key] = KeptRow(
                tuple(prompt) + tuple(out.token_ids[:n]),
                tuple(
                    (
                        decoder.k_cache[layer, i, :, cols].clone(),
                        decoder.v_cache[layer, i, :, cols].clone(),
                    )
                    for layer in range(layers)
                ),
            )
