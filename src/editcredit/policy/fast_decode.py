"""A tight decode loop for Qwen2-style models: static KV cache, one CUDA graph per decode step.

Transformers' default ``generate`` spends most of a small model's decode step in Python and
kernel launches. This backend reads the weights of an ordinary HF Qwen2 model (no copy), keeps a
preallocated KV cache of fixed shape, and replays a captured CUDA graph for every new token. On
CPU (or with ``use_graph=False``) the same code runs eagerly, which is how its exactness is
tested against the HF forward.

Same interface as every generator: token ids in, token ids and log-probs (of the sampling
distribution, logits / temperature) out; batched; seeded.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from editcredit.policy.generation import GenerationOutput, collect_outputs, left_padded


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = x.dtype
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Qwen2Decoder:
    """Qwen2 forward over a static cache of ``batch`` rows and ``max_len`` columns."""

    def __init__(self, model: torch.nn.Module, batch: int, max_len: int) -> None:
        cfg = model.config
        if getattr(cfg, "model_type", "") not in ("qwen2", "llama"):
            raise ValueError(f"fast decode supports qwen2/llama configs, not {cfg.model_type!r}")
        self.model = model
        self.inner = model.model
        self.batch, self.max_len = batch, max_len
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.eps = cfg.rms_norm_eps
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        shape = (len(self.inner.layers), batch, self.n_kv, max_len, self.head_dim)
        self.k_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
        self.v_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
        rotary = self.inner.rotary_emb
        positions = torch.arange(max_len, device=self.device, dtype=torch.float32)
        freqs = torch.outer(positions, rotary.inv_freq.to(self.device, torch.float32))
        emb = torch.cat((freqs, freqs), dim=-1)
        scaling = float(getattr(rotary, "attention_scaling", 1.0))
        self.cos = (emb.cos() * scaling).to(self.dtype)
        self.sin = (emb.sin() * scaling).to(self.dtype)
        self.columns = torch.arange(max_len, device=self.device)

    def forward(
        self, ids: torch.Tensor, pos: torch.Tensor, start: torch.Tensor, valid: torch.Tensor
    ) -> torch.Tensor:
        """Logits of the last of ``S`` new tokens per row, writing their K/V at columns
        ``start .. start+S-1``. ``ids``/``pos`` are [B, S]; ``valid`` [B, max_len] marks the
        columns a row may attend to (its non-padding history, these S columns included)."""
        B, S = ids.shape
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
            q = attn.q_proj(x).view(B, S, self.n_heads, self.head_dim).transpose(1, 2)
            k = attn.k_proj(x).view(B, S, self.n_kv, self.head_dim).transpose(1, 2)
            v = attn.v_proj(x).view(B, S, self.n_kv, self.head_dim).transpose(1, 2)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            self.k_cache[i].index_copy_(2, cols, k)
            self.v_cache[i].index_copy_(2, cols, v)
            out = F.scaled_dot_product_attention(
                q,
                self.k_cache[i],
                self.v_cache[i],
                attn_mask=allowed,
                scale=1.0 / math.sqrt(self.head_dim),
                enable_gqa=self.n_heads != self.n_kv,
            )
            h = h + attn.o_proj(out.transpose(1, 2).reshape(B, S, -1))
            mlp = layer.mlp
            x = _rms(h, layer.post_attention_layernorm.weight, self.eps)
            h = h + mlp.down_proj(F.silu(mlp.gate_proj(x)) * mlp.up_proj(x))
        h = _rms(h[:, -1], self.inner.norm.weight, self.eps)
        return self.model.lm_head(h)


class FastGenerator:
    """Sampling with ``Qwen2Decoder``: eager prefill, then one replayed CUDA graph per token.

    The whole decode step lives in the graph: sample from the current logits (exponential race,
    ``argmax(p / E)`` with ``E ~ Exp(1)`` drawn from the seeded generator outside the graph),
    record the token and its log-prob, then run the model on it for the next logits.
    """

    def __init__(
        self, model: torch.nn.Module, eos_id: int, pad_id: int, use_graph: bool | None = None
    ) -> None:
        self.model = model.eval()
        self.eos_id, self.pad_id = eos_id, pad_id
        device = next(model.parameters()).device
        self.use_graph = device.type == "cuda" if use_graph is None else use_graph
        self._decoder: Qwen2Decoder | None = None
        self._static: dict[str, torch.Tensor] | None = None
        self._graph = None
        self.chunk = 16  # steps per noise draw and per host check of "every row finished"

    def _buffers(self, batch: int, max_len: int, max_new: int) -> dict[str, torch.Tensor]:
        d = self._decoder
        if (
            d is None
            or d.batch != batch
            or d.max_len < max_len
            or self._static is None
            or (self._static["tokens"].shape[1] < max_new)
        ):
            d = self._decoder = Qwen2Decoder(self.model, batch, max_len)
            vocab = self.model.config.vocab_size
            z = {"device": d.device}
            self._static = {
                "logits": torch.zeros((batch, vocab), dtype=d.dtype, **z),
                "noise": torch.ones((batch, vocab), dtype=torch.float32, **z),
                "inv_temp": torch.ones((), dtype=torch.float32, **z),
                "pos": torch.zeros((batch, 1), dtype=torch.long, **z),
                "col": torch.zeros((), dtype=torch.long, **z),
                "step": torch.zeros((), dtype=torch.long, **z),
                "valid": torch.zeros((batch, d.max_len), dtype=torch.bool, **z),
                "done": torch.zeros((batch,), dtype=torch.bool, **z),
                "tokens": torch.zeros((batch, max_new), dtype=torch.long, **z),
                "logps": torch.zeros((batch, max_new), dtype=torch.float32, **z),
            }
            self._graph = None
        return self._static

    def _step(self, s: dict[str, torch.Tensor]) -> None:
        """Sample from ``logits``, record, and compute the logits of the next position."""
        d = self._decoder
        logp = torch.log_softmax(s["logits"].float() * s["inv_temp"], dim=-1)
        sample = torch.argmax(logp - torch.log(s["noise"]), dim=-1)
        sample = torch.where(s["done"], torch.full_like(sample, self.pad_id), sample)
        at = s["step"].view(1)
        s["tokens"].index_copy_(1, at, sample[:, None])
        s["logps"].index_copy_(1, at, logp.gather(-1, sample[:, None]))
        s["done"].logical_or_(sample == self.eos_id)
        s["valid"].index_fill_(1, s["col"].view(1), True)
        s["logits"].copy_(d.forward(sample[:, None], s["pos"], s["col"], s["valid"]))
        s["pos"].add_(1)
        s["col"].add_(1)
        s["step"].add_(1)

    def _capture(self, s: dict[str, torch.Tensor]) -> None:
        saved = {k: v.clone() for k, v in s.items()}
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):  # warm-up outside the graph
                self._step(s)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._step(s)
        for k, v in saved.items():
            s[k].copy_(v)
        self._graph = graph

    @torch.no_grad()
    def generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]:
        if not prompts:
            return []
        if temperature <= 0:
            raise ValueError("temperature must be > 0 (sampling with recorded log-probs)")
        B, W = len(prompts), max(len(p) for p in prompts)
        s = self._buffers(B, W + max_new_tokens, max_new_tokens)
        d = self._decoder
        if self.use_graph and self._graph is None:
            self._capture(s)
        ids, mask, pos = left_padded(prompts, self.pad_id, d.device)
        valid = torch.zeros((B, d.max_len), dtype=torch.bool, device=d.device)
        valid[:, :W] = mask.bool()
        s["valid"].copy_(valid)
        s["logits"].copy_(d.forward(ids, pos, torch.tensor(0, device=d.device), valid))
        s["pos"].copy_(pos[:, -1:] + 1)
        s["col"].fill_(W)
        s["step"].zero_()
        s["done"].zero_()
        s["inv_temp"].fill_(1.0 / temperature)
        gen = torch.Generator(device=d.device)
        gen.manual_seed(seed)
        steps = 0
        while steps < max_new_tokens:
            n = min(self.chunk, max_new_tokens - steps)
            noise = torch.empty((n, B, s["noise"].shape[1]), device=d.device)
            noise.exponential_(generator=gen)
            for i in range(n):
                s["noise"].copy_(noise[i])
                if self._graph is not None:
                    self._graph.replay()
                else:
                    self._step(s)
            steps += n
            if bool(s["done"].all()):
                break
        return collect_outputs(s["tokens"][:, :steps], s["logps"][:, :steps], self.eos_id)
