"""Small Hugging Face checkpoints for audit tests: a tiny Qwen2 model and edited copies."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

Tensors = dict[str, np.ndarray]


def tiny_qwen2(dst: Path) -> Path:
    """A randomly initialised 1-layer Qwen2 (F32) saved with ``save_pretrained``."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    Qwen2ForCausalLM(cfg).save_pretrained(str(dst))
    return dst


def load(model_dir: Path) -> Tensors:
    return load_file(str(model_dir / "model.safetensors"))


def variant(src: Path, dst: Path, edit: Callable[[Tensors], object] | None = None) -> Path:
    """Copy the HF directory ``src`` to ``dst`` with ``edit`` applied to its tensors."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("identity.json"))
    tensors = load(src)
    if edit is not None:
        edit(tensors)  # in place
    save_file(tensors, str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


def nudge(name: str, index: tuple[int, ...] = (0, 0), by: float = 0.5) -> Callable[[Tensors], None]:
    """An edit adding ``by`` to one element."""

    def edit(t: Tensors) -> None:
        t[name][index] += np.float32(by)

    return edit


def save_bf16(tensors: Tensors, path: Path) -> None:
    """Store every tensor as BF16 (torch does the rounding)."""
    import torch
    from safetensors.torch import save_file as save_torch

    out = {k: torch.from_numpy(v.copy()).to(torch.bfloat16) for k, v in tensors.items()}
    save_torch(out, str(path), metadata={"format": "pt"})
