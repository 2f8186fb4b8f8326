"""A tight decode loop for Qwen2-style models: static KV cache, one CUDA graph per decode step.

Transformers' default ``generate`` spends most of a small model's decode step in Python and
kernel launches. This backend reads the weights of an ordinary HF Qwen2/Llama model, keeps a
preallocated KV cache of fixed shape, and replays a captured CUDA graph for every new token.
The decode step is cut to few kernels: the q/k/v and gate/up projections run as one matrix
product each (their weights concatenated into buffers refreshed from the model at every call,
so a policy updated between calls is decoded with its current weights); the one-token step is
pure (the new token attends to the grouped cache and to itself, and returns its K/V), so with
``compile=True`` ``torch.compile`` fuses it whole before the graph is captured; the caches of all
layers are then written by one batched copy. Decoding runs in the model's own dtype (an
enclosing autocast is switched off).
On CPU (or with ``use_graph=False``) the same code runs eagerly, which is how its exactness is
tested against the HF forward.

Same interface as every generator: token ids in, token ids and log-probs (of the sampling
distribution, logits / temperature) out; batched; seeded.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F

from editcredit.policy import gpu_memory
from editcredit.policy.generation import (
    GenerationOutput,
    collect_outputs,
    left_padded,
    stop_tuple,
)


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = x.dtype
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _concat_buffer(tensors: list[torch.Tensor | None]) -> torch.Tensor | None:
    """A buffer holding ``tensors`` concatenated on dim 0 (None when any is None)."""
    if any(t is None for t in tensors):
        return None
    return torch.cat([t.detach() for t in cast(list[torch.Tensor], tensors)], dim=0)


class FusedWeights:
    """The q/k/v and gate/up projections of every layer concatenated, one matrix product each.

    ``refresh`` copies the model's current weights in place (a captured graph keeps reading the
    same memory), so a policy updated between calls is decoded with its new weights."""

    def __init__(self, model: torch.nn.Module) -> None:
        # the HF model's submodules (model.layers, self_attn, ...) are attributes nn.Module
        # cannot type: read as Any
        self.layers: Any = cast(Any, model).model.layers
        # weights are never None (only a bias may be), so their buffers are tensors
        self.qkv_w: list[torch.Tensor] = []
        self.qkv_b: list[torch.Tensor | None] = []
        self.gate_up_w: list[torch.Tensor] = []
        for layer in self.layers:
            a, m = layer.self_attn, layer.mlp
            self.qkv_w.append(
                cast(
                    torch.Tensor,
                    _concat_buffer([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]),
                )
            )
            self.qkv_b.append(_concat_buffer([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
            self.gate_up_w.append(
                cast(torch.Tensor, _concat_buffer([m.gate_proj.weight, m.up_proj.weight]))
            )

    @torch.no_grad()
    def refresh(self) -> None:
        for i, layer in enumerate(self.layers):
            a, m = layer.self_attn, layer.mlp
            torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight], out=self.qkv_w[i])
            if self.qkv_b[i] is not None:
                torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias], out=self.qkv_b[i])
            torch.cat([m.gate_proj.weight, m.up_proj.weight], out=self.gate_up_w[i])


class Qwen2Decoder:
    """Qwen2 forward over a static cache of ``batch`` rows and ``max_len`` columns."""

    def __init__(
        self,
        model: torch.nn.Module,
        batch: int,
        max_len: int,
        fused: FusedWeights | None = None,
        memory: torch.Tensor | None = None,
    ) -> None:
        """``memory``: a flat tensor of the model's dtype and device, at least
        :meth:`cache_elements` long, whose values are finite, to hold the cache instead of
        fresh zeros (a caller decoding call after call reuses it). Columns a row may not
        attend to then hold stale finite values: their attention weights are exactly 0, so
        every output is the zero cache's."""
        # an HF causal LM: its config and submodules are attributes nn.Module cannot type
        hf = cast(Any, model)
        self.model: Any = hf
        cfg = hf.config
        if getattr(cfg, "model_type", "") not in ("qwen2", "llama"):
            raise ValueError(f"fast decode supports qwen2/llama configs, not {cfg.model_type!r}")
        self.inner: Any = hf.model
        self.batch, self.max_len = batch, max_len
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        shape = self.cache_shape(model, batch, max_len)
        self.head_dim = shape[-1]
        self.eps = cfg.rms_norm_eps
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        if memory is None:
            self.k_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
            self.v_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
        else:
            n = math.prod(shape)
            if memory.numel() < 2 * n or memory.dtype != self.dtype:
                raise ValueError(
                    f"decoder memory holds {memory.numel()} {memory.dtype} elements; the cache "
                    f"needs {2 * n} {self.dtype}"
                )
            self.k_cache = memory[:n].view(shape)
            self.v_cache = memory[n : 2 * n].view(shape)
        rotary = self.inner.rotary_emb
        positions = torch.arange(max_len, device=self.device, dtype=torch.float32)
        freqs = torch.outer(positions, rotary.inv_freq.to(self.device, torch.float32))
        emb = torch.cat((freqs, freqs), dim=-1)
        scaling = float(getattr(rotary, "attention_scaling", 1.0))
        self.cos = (emb.cos() * scaling).to(self.dtype)
        self.sin = (emb.sin() * scaling).to(self.dtype)
        self.columns = torch.arange(max_len, device=self.device)
        self.fused = fused if fused is not None else FusedWeights(model)
        self.qkv_w, self.qkv_b = self.fused.qkv_w, self.fused.qkv_b
        self.gate_up_w = self.fused.gate_up_w

    @staticmethod
    def cache_shape(model: torch.nn.Module, batch: int, max_len: int) -> tuple[int, ...]:
        """The shape of the keys (and of the values): layers, rows, kv heads, columns, head."""
        hf: Any = model  # an HF causal LM (config and submodules untyped on nn.Module)
        cfg = hf.config
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        return (len(hf.model.layers), batch, cfg.num_key_value_heads, max_len, head_dim)

    @classmethod
    def cache_elements(cls, model: torch.nn.Module, batch: int, max_len: int) -> int:
        """Elements of the keys and values of ``batch`` rows of ``max_len`` columns."""
        return 2 * math.prod(cls.cache_shape(model, batch, max_len))

    def refresh_weights(self) -> None:
        self.fused.refresh()

    def rows(self, start: int, stop: int) -> Qwen2Decoder:
        """A decoder over rows ``start .. stop-1`` of this one's cache (views: what it writes
        lands in this cache)."""
        view = copy.copy(self)
        view.batch = stop - start
        view.k_cache = self.k_cache[:, start:stop]
        view.v_cache = self.v_cache[:, start:stop]
        return view

    def prefill(
        self, ids: torch.Tensor, pos: torch.Tensor, valid: torch.Tensor, chunk_rows: int
    ) -> torch.Tensor:
        """:meth:`forward` of prompts [B, S] from column 0, ``chunk_rows`` rows at a time (the
        working set of a forward grows with its rows x S x the cache length); one forward of
        every row when ``chunk_rows`` covers them."""
        start = torch.tensor(0, device=self.device)
        B = ids.shape[0]
        if chunk_rows >= B:
            return self.forward(ids, pos, start, valid)
        parts = []
        for a in range(0, B, chunk_rows):
            b = min(B, a + chunk_rows)
            parts.append(self.rows(a, b).forward(ids[a:b], pos[a:b], start, valid[a:b]))
        return torch.cat(parts)

    def _attend(self, q, i: int, allowed: torch.Tensor) -> torch.Tensor:
        """[B, H, S, hd] prompt queries against layer ``i``'s cache -> [B, S, H*hd]."""
        B, H, S, hd = q.shape
        out = F.scaled_dot_product_attention(
            q,
            self.k_cache[i],
            self.v_cache[i],
            attn_mask=allowed,
            scale=1.0 / math.sqrt(hd),
            enable_gqa=H != self.n_kv,
        )
        return out.transpose(1, 2).reshape(B, S, H * hd)

    def forward(
        self, ids: torch.Tensor, pos: torch.Tensor, start: torch.Tensor, valid: torch.Tensor
    ) -> torch.Tensor:
        """Logits of the last of ``S`` new tokens per row, writing their K/V at columns
        ``start .. start+S-1``. ``ids``/``pos`` are [B, S]; ``valid`` [B, max_len] marks the
        columns a row may attend to (its non-padding history, these S columns included)."""
        B, S = ids.shape
        H, KV, hd = self.n_heads, self.n_kv, self.head_dim
        cols = start + torch.arange(S, device=self.device)
        h = self.inner.embed_tokens(ids)
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]  # [B, 1, S, hd]
        # the valid history, causal inside the new block; every query may see its own column
        # (a padding query would otherwise see nothing, and its NaN would reach the cache)
        col = self.columns[None, None, None, :]
        here = cols[None, None, :, None]
        allowed = (valid[:, None, None, :] & (col <= here)) | (col == here)
        for i, layer in enumerate(self.inner.layers):
            attn = layer.self_attn
            x = _rms(h, layer.input_layernorm.weight, self.eps)
            qkv = F.linear(x, self.qkv_w[i], self.qkv_b[i])
            q, k, v = qkv.split((H * hd, KV * hd, KV * hd), dim=-1)
            q = q.view(B, S, H, hd).transpose(1, 2)
            k = k.view(B, S, KV, hd).transpose(1, 2)
            v = v.view(B, S, KV, hd).transpose(1, 2)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            self.k_cache[i].index_copy_(2, cols, k)
            self.v_cache[i].index_copy_(2, cols, v)
            h = h + attn.o_proj(self._attend(q, i, allowed))
            x = _rms(h, layer.post_attention_layernorm.weight, self.eps)
            gate, up = F.linear(x, self.gate_up_w[i]).chunk(2, dim=-1)
            h = h + layer.mlp.down_proj(F.silu(gate) * up)
        h = _rms(h[:, -1], self.inner.norm.weight, self.eps)
        return self.model.lm_head(h)

    def decode(
        self, ids: torch.Tensor, pos: torch.Tensor, valid: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One new token per row, without writing the cache: logits [B, V] and the new K and V
        of every layer ([layers, B, kv, 1, hd], for one batched cache write by the caller).
        ``valid`` [B, max_len] marks the history a row attends to (not the new column). Pure,
        so ``torch.compile`` can fuse it whole."""
        B = ids.shape[0]
        H, KV, hd = self.n_heads, self.n_kv, self.head_dim
        g, scale = H // KV, 1.0 / math.sqrt(hd)
        h = self.inner.embed_tokens(ids)  # [B, 1, D]
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]  # [B, 1, 1, hd]
        hidden = ~valid[:, None, None, :]  # [B, 1, 1, L]
        new_k, new_v = [], []
        for i, layer in enumerate(self.inner.layers):
            x = _rms(h, layer.input_layernorm.weight, self.eps)
            qkv = F.linear(x, self.qkv_w[i], self.qkv_b[i])
            q, k, v = qkv.split((H * hd, KV * hd, KV * hd), dim=-1)
            q = q.view(B, 1, H, hd).transpose(1, 2)
            k = k.view(B, 1, KV, hd).transpose(1, 2)
            v = v.view(B, 1, KV, hd).transpose(1, 2)  # [B, kv, 1, hd]
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            new_k.append(k)
            new_v.append(v)
            qg = q.reshape(B, KV, g, hd)
            old = torch.matmul(qg, self.k_cache[i].transpose(-1, -2)).float() * scale
            old = old.masked_fill(hidden, float("-inf"))  # [B, kv, g, L]
            own = (qg.float() * k.float()).sum(-1, keepdim=True) * scale  # [B, kv, g, 1]
            probs = torch.softmax(torch.cat([old, own], dim=-1), dim=-1)
            out = torch.matmul(probs[..., :-1].to(v.dtype), self.v_cache[i])
            out = out + probs[..., -1:].to(v.dtype) * v
            h = h + layer.self_attn.o_proj(out.reshape(B, 1, H * hd))
            x = _rms(h, layer.post_attention_layernorm.weight, self.eps)
            gate, up = F.linear(x, self.gate_up_w[i]).chunk(2, dim=-1)
            h = h + layer.mlp.down_proj(F.silu(gate) * up)
        h = _rms(h[:, -1], self.inner.norm.weight, self.eps)
        return self.model.lm_head(h), torch.stack(new_k), torch.stack(new_v)


@dataclass
class _Slot:
    """A decoder, its static buffers and (on CUDA) its captured graph, for one shape bucket."""

    decoder: Qwen2Decoder
    static: dict[str, torch.Tensor]
    step_fn: Callable[[dict[str, torch.Tensor]], None]
    graph: torch.cuda.CUDAGraph | None = None


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


class FastGenerator:
    """Sampling with ``Qwen2Decoder``: eager prefill, then one replayed CUDA graph per token.

    The whole decode step lives in the graph: sample from the current logits (exponential race,
    ``argmax(p / E)`` with ``E ~ Exp(1)``: a chunk of noise is drawn from the seeded generator
    outside the graph, and each step reads its own row), record the token and its log-prob,
    then run the model on it for the next logits. ``compile=True`` fuses the step with
    ``torch.compile`` before capture (worth it for long generations of stable shape; every new
    shape bucket compiles again).

    Shapes are bucketed so that multi-turn rollouts, whose batch shrinks and whose prompts grow
    from turn to turn, reuse a few graphs: the batch is padded to a power of two (padding rows
    copy the first prompt, start finished and are dropped), the cache length to a multiple of
    ``length_bucket``. The last ``max_cached`` buckets are kept.

    With a ``memory_budget`` (bytes this process may hold on its GPU; by default the cap the
    job set when it bound its devices, ``editcredit.policy.devices.memory_budget_bytes``), a
    call is planned inside it (``editcredit.policy.gpu_memory.generation_plan``): the oldest
    buckets are dropped until the new one fits, the prompts are encoded a chunk of rows at a
    time (padding rows are not encoded), and a call of more rows than one pass holds is
    decoded in passes (each its own seed, derived from the call's). Without a budget (CPU) a
    call runs as one pass, as before.
    """

    chunk = 16  # steps per noise draw and per host check of "every row finished"
    length_bucket = 128
    max_cached = 6

    def __init__(
        self,
        model: torch.nn.Module,
        stop_ids: int | Sequence[int],
        pad_id: int,
        use_graph: bool | None = None,
        *,
        compile: bool,
        memory_budget: int | None = None,
    ) -> None:
        # an HF causal LM: its config is an attribute nn.Module cannot type
        self.model: Any = model.eval()
        self.stop_ids, self.pad_id = stop_tuple(stop_ids), pad_id
        device = next(model.parameters()).device
        self._stops = torch.tensor(self.stop_ids, dtype=torch.long, device=device)
        self.use_graph = device.type == "cuda" if use_graph is None else use_graph
        self.compile = compile
        self._fused: FusedWeights | None = None
        self._slots: OrderedDict[tuple[int, int, int], _Slot] = OrderedDict()
        self._capture_stream: torch.cuda.Stream | None = None
        if memory_budget is None and device.type == "cuda":
            from editcredit.policy.devices import memory_budget_bytes

            memory_budget = memory_budget_bytes()
        self.memory_budget = memory_budget
        on_gpu = device.type == "cuda"
        self._memory_used = (lambda: torch.cuda.memory_allocated(device)) if on_gpu else (lambda: 0)
        self._shape: gpu_memory.ModelShape | None = None
        self._dtype_bytes = next(model.parameters()).element_size()

    def _slot(self, batch: int, max_len: int, max_new: int) -> _Slot:
        key = (batch, max_len, max_new)
        if key in self._slots:
            self._slots.move_to_end(key)
            return self._slots[key]
        if self._fused is None:
            self._fused = FusedWeights(self.model)
        d = Qwen2Decoder(self.model, batch, max_len, self._fused)
        vocab = self.model.config.vocab_size
        z: dict[str, Any] = {"device": d.device}
        static = {
            "logits": torch.zeros((batch, vocab), dtype=d.dtype, **z),
            "noise": torch.ones((self.chunk, batch, vocab), dtype=torch.float32, **z),
            "inv_temp": torch.ones((), dtype=torch.float32, **z),
            "pos": torch.zeros((batch, 1), dtype=torch.long, **z),
            "col": torch.zeros((), dtype=torch.long, **z),
            "step": torch.zeros((), dtype=torch.long, **z),
            "valid": torch.zeros((batch, max_len), dtype=torch.bool, **z),
            "done": torch.zeros((batch,), dtype=torch.bool, **z),
            "tokens": torch.zeros((batch, max_new), dtype=torch.long, **z),
            "logps": torch.zeros((batch, max_new), dtype=torch.float32, **z),
        }

        def sample_and_decode(st: dict[str, torch.Tensor]):
            return self._sample_and_decode(d, st)

        pure = sample_and_decode
        if self.compile:
            pure = torch.compile(sample_and_decode, fullgraph=True, dynamic=False)

        def step(st: dict[str, torch.Tensor]) -> None:
            self._record(d, st, *pure(st))

        slot = _Slot(d, static, step)
        if self.use_graph:
            self._capture(slot)
        self._slots[key] = slot
        while len(self._slots) > self.max_cached:
            self._slots.popitem(last=False)
        return slot

    def _sample_and_decode(self, d: Qwen2Decoder, s: dict[str, torch.Tensor]):
        """Sample from ``logits`` and run the model on the samples (pure: writes nothing)."""
        noise = s["noise"].index_select(0, torch.remainder(s["step"], self.chunk).view(1))[0]
        logp = torch.log_softmax(s["logits"].float() * s["inv_temp"], dim=-1)
        sample = torch.argmax(logp - torch.log(noise), dim=-1)
        sample = torch.where(s["done"], torch.full_like(sample, self.pad_id), sample)
        logits, new_k, new_v = d.decode(sample[:, None], s["pos"], s["valid"])
        return sample, logp.gather(-1, sample[:, None]), logits, new_k, new_v

    def _record(self, d: Qwen2Decoder, s, sample, logp, logits, new_k, new_v) -> None:
        """Write the step's results into the static buffers and the cache."""
        at, col = s["step"].view(1), s["col"].view(1)
        s["tokens"].index_copy_(1, at, sample[:, None])
        s["logps"].index_copy_(1, at, logp)
        s["done"].logical_or_((sample[:, None] == self._stops[None, :]).any(-1))
        d.k_cache.index_copy_(3, col, new_k)
        d.v_cache.index_copy_(3, col, new_v)
        s["valid"].index_fill_(1, col, True)
        s["logits"].copy_(logits)
        s["pos"].add_(1)
        s["col"].add_(1)
        s["step"].add_(1)

    def _capture(self, slot: _Slot) -> None:
        """Warm the step up on a side stream and capture it. One side stream serves every
        capture of this generator: libraries keep per-stream state (cuBLAS workspaces) for as
        long as the process lives, so a fresh stream per bucket would grow it without bound."""
        s = slot.static
        saved = {k: v.clone() for k, v in s.items()}
        if self._capture_stream is None:
            self._capture_stream = torch.cuda.Stream()
        stream = self._capture_stream
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):  # warm-up (and compilation) outside the graph
                slot.step_fn(s)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            slot.step_fn(s)
        for k, v in saved.items():
            s[k].copy_(v)
        slot.graph = graph

    def generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]:
        """Decode in the model's own dtype: an enclosing autocast is switched off, since its
        cached weight casts would be freed under a captured graph that still reads them."""
        device = next(self.model.parameters()).device
        with torch.no_grad(), torch.autocast(device.type, enabled=False):
            return self._generate(prompts, max_new_tokens, temperature, seed)

    def _generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]:
        if not prompts:
            return []
        if temperature <= 0:
            raise ValueError("temperature must be > 0 (sampling with recorded log-probs)")
        if self.memory_budget is None:
            return self._pass(prompts, max_new_tokens, temperature, seed, None)
        rows = self._plan(prompts, max_new_tokens, evictable=True).rows
        if rows >= len(prompts):
            return self._pass(prompts, max_new_tokens, temperature, seed, rows)
        out: list[GenerationOutput] = []
        for k, a in enumerate(range(0, len(prompts), rows)):
            part_seed = (seed * 1_000_003 + k) % (2**63)
            out += self._pass(prompts[a : a + rows], max_new_tokens, temperature, part_seed, rows)
        return out

    def _model_shape(self) -> gpu_memory.ModelShape:
        if self._shape is None:
            self._shape = gpu_memory.ModelShape.from_hf_config(self.model.config.to_dict())
        return self._shape

    def _free_bytes(self, evictable: bool) -> int:
        """The budget left to this call (``evictable``: as if every kept bucket were dropped)."""
        used = self._memory_used()
        if evictable:
            used -= sum(self._slot_bytes(key) for key in self._slots)
        # only called on a planned call, which has a budget
        budget = cast(int, self.memory_budget)
        return int(budget * gpu_memory.PLAN_HEADROOM) - max(0, used)

    def _slot_bytes(self, key: tuple[int, int, int]) -> int:
        batch, max_len, new = key
        return gpu_memory.decode_slot_bytes(
            self._model_shape(), batch, max_len, new, self._dtype_bytes
        )

    def _plan(self, prompts, max_new_tokens: int, evictable: bool) -> gpu_memory.GenerationPlan:
        width = max(len(p) for p in prompts)
        return gpu_memory.generation_plan(
            self._model_shape(),
            len(prompts),
            width,
            max_new_tokens,
            self._dtype_bytes,
            self._free_bytes(evictable),
        )

    def _make_room(self, key: tuple[int, int, int], width: int) -> int:
        """Drop the oldest kept buckets until bucket ``key`` and one prefill row fit in the
        budget; the rows a prefill chunk may then take."""
        shape, size = self._model_shape(), self._dtype_bytes
        row = gpu_memory.prefill_row_bytes(shape, width, key[1], size)
        need = row + (0 if key in self._slots else self._slot_bytes(key))
        while self._free_bytes(False) < need and any(k != key for k in self._slots):
            oldest = next(k for k in self._slots if k != key)
            del self._slots[oldest]
        return max(1, (self._free_bytes(False) - need + row) // row)

    def _pass(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        seed: int,
        planned_rows: int | None,
    ) -> list[GenerationOutput]:
        B, W = len(prompts), max(len(p) for p in prompts)
        batch = 1 << (B - 1).bit_length()
        new = _round_up(max_new_tokens, self.chunk)
        key = (batch, _round_up(W + new, self.length_bucket), new)
        chunk_rows = batch if planned_rows is None else self._make_room(key, W)
        slot = self._slot(*key)
        d, s = slot.decoder, slot.static
        d.refresh_weights()
        if planned_rows is None:
            rows = prompts + [prompts[0]] * (batch - B)
            ids, mask, pos = left_padded(rows, self.pad_id, d.device)
            valid = torch.zeros((batch, d.max_len), dtype=torch.bool, device=d.device)
            valid[:, :W] = mask.bool()
            s["valid"].copy_(valid)
            s["logits"].copy_(d.forward(ids, pos, torch.tensor(0, device=d.device), valid))
        else:  # padding rows are not encoded: they start finished, their outputs dropped
            ids, mask, pos = left_padded(prompts, self.pad_id, d.device)
            valid = torch.zeros((batch, d.max_len), dtype=torch.bool, device=d.device)
            valid[:B, :W] = mask.bool()
            valid[B:, 0] = True  # a padding row attends to one (finite) column
            s["valid"].copy_(valid)
            s["logits"].zero_()
            s["logits"][:B].copy_(d.rows(0, B).prefill(ids, pos, valid[:B], chunk_rows))
            pos = torch.cat([pos, pos[:1].expand(batch - B, -1)])
        s["pos"].copy_(pos[:, -1:] + 1)
        s["col"].fill_(W)
        s["step"].zero_()
        s["done"].zero_()
        s["done"][B:] = True  # padding rows
        s["inv_temp"].fill_(1.0 / temperature)
        gen = torch.Generator(device=d.device)
        gen.manual_seed(seed)
        steps = 0
        while steps < max_new_tokens:
            n = min(self.chunk, max_new_tokens - steps)
            s["noise"].exponential_(generator=gen)
            for _ in range(n):
                if slot.graph is not None:
                    slot.graph.replay()
                else:
                    slot.step_fn(s)
            steps += n
            if bool(s["done"][:B].all()):
                break
        return collect_outputs(s["tokens"][:B, :steps], s["logps"][:B, :steps], self.stop_ids)
