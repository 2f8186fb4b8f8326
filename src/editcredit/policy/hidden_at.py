"""Final hidden states of a causal LM at chosen positions only, for a loss that reads a few.

SFT on the actions alone needs the output head at the action positions (about one token in
eight), and so does the last decoder layer: its keys and values are needed everywhere, but
its queries, attention, MLP and final norm only where a hidden state is read. Every earlier
layer runs as the model runs it. The states are the model's own up to the order of
floating-point sums (``tests/policy/test_hidden_at.py`` compares them and their gradients
with the full forward pass).

Only Qwen2-style decoders whose every layer attends causally over the whole sequence take this
path (the tiny default's architecture); any other model runs its full forward pass.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding of ``x`` (B, heads, T, d) with ``cos``/``sin`` (B, T, d)."""
    return x * cos[:, None] + _rotate_half(x) * sin[:, None]


def supports_partial_last_layer(model) -> bool:
    """Whether ``model`` is a decoder this module knows: Qwen2 layers, full causal attention."""
    base = getattr(model, "model", None)
    config = getattr(model, "config", None)
    if base is None or config is None or getattr(config, "model_type", "") != "qwen2":
        return False
    types = getattr(config, "layer_types", None) or ["full_attention"]
    return all(t == "full_attention" for t in types) and not getattr(
        config, "use_sliding_window", False
    )


def all_hidden_at(model, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """:func:`hidden_at` by the model's full forward pass (every layer at every position)."""
    return model.base_model(input_ids=ids).last_hidden_state[keep]


def hidden_at(model, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Final (normed) hidden states of right-padded rows ``ids`` (B, T) at the positions where
    ``keep`` (B, T, bool) is true, in row-major order (as ``hidden[keep]``)."""
    if not supports_partial_last_layer(model):
        return all_hidden_at(model, ids, keep)
    base = model.model
    batch, length = ids.shape
    positions = torch.arange(length, device=ids.device)[None]
    hidden = base.embed_tokens(ids)
    cos, sin = base.rotary_emb(hidden, positions)
    for layer in base.layers[:-1]:
        hidden = layer(
            hidden, attention_mask=None, position_ids=positions, position_embeddings=(cos, sin)
        )
    last = base.layers[-1]
    attn = last.self_attn
    d = attn.head_dim

    # the kept positions of each row, left-aligned and padded with position 0
    counts = keep.sum(dim=1)
    width = max(int(counts.max()), 1)
    order = torch.argsort((~keep).to(torch.int8), dim=1, stable=True)[:, :width]
    valid = torch.arange(width, device=ids.device)[None] < counts[:, None]
    at = torch.where(valid, order, torch.zeros_like(order))

    normed = last.input_layernorm(hidden)
    keys = attn.k_proj(normed).view(batch, length, -1, d).transpose(1, 2)
    values = attn.v_proj(normed).view(batch, length, -1, d).transpose(1, 2)
    keys = _rotary(keys, cos.expand(batch, -1, -1), sin.expand(batch, -1, -1))
    groups = attn.num_key_value_groups
    keys = keys.repeat_interleave(groups, dim=1)
    values = values.repeat_interleave(groups, dim=1)

    picked = at[..., None].expand(-1, -1, hidden.shape[-1])
    residual = hidden.gather(1, picked)
    queries = attn.q_proj(normed.gather(1, picked)).view(batch, width, -1, d).transpose(1, 2)
    cos_q = cos.expand(batch, -1, -1).gather(1, at[..., None].expand(-1, -1, d))
    sin_q = sin.expand(batch, -1, -1).gather(1, at[..., None].expand(-1, -1, d))
    queries = _rotary(queries, cos_q, sin_q)
    causal = torch.arange(length, device=ids.device)[None, None] <= at[..., None]  # B, Q, T
    out = F.scaled_dot_product_attention(
        queries, keys, values, attn_mask=causal[:, None], scale=attn.scaling
    )
    out = attn.o_proj(out.transpose(1, 2).reshape(batch, width, -1))
    states = residual + out
    states = states + last.mlp(last.post_attention_layernorm(states))
    return base.norm(states[valid])
