"""Tiny causal LMs of a standard architecture (Qwen2), loaded and saved as HF directories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import torch
from transformers import AutoModelForCausalLM, Qwen2Config

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def tiny_config(
    vocab_size: int, cfg: dict[str, Any], pad_id: int, bos_id: int | None, eos_id: int
) -> Qwen2Config:
    """A Qwen2 config from the ``model`` section of the config (sizes are config values)."""
    return Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=int(cfg["hidden_size"]),
        intermediate_size=int(cfg["intermediate_size"]),
        num_hidden_layers=int(cfg["num_layers"]),
        num_attention_heads=int(cfg["num_heads"]),
        num_key_value_heads=int(cfg["num_kv_heads"]),
        max_position_embeddings=int(cfg["max_positions"]),
        tie_word_embeddings=True,
        # transformers still takes the legacy rope_theta (into rope_parameters); its typed
        # signature names only rope_parameters
        rope_theta=10000.0,  # type: ignore[call-arg]
        pad_token_id=pad_id,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        use_cache=True,
    )


def new_model(config: Qwen2Config, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)


def enable_activation_checkpointing(model: torch.nn.Module) -> None:
    """Recompute every decoder layer's activations in the backward pass (non-reentrant), through
    whichever name this transformers version gives it."""
    enable = getattr(model, "activation_checkpointing_enable", None)
    if enable is not None:
        enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        hf = cast("PreTrainedModel", model)  # an HF model of a version without the newer name
        hf.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
