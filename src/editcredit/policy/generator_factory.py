"""Pick the generation backend by config (``generation.backend``): transformers, static, fast
or vLLM.

All sit behind the one generation interface (``editcredit.policy.generation.Generator``).
``make_generator`` builds one for an HF model directory (or wraps a transformers model already
loaded, e.g. a rollout worker's policy copy); ``load_generator`` also loads the tokenizer and its
chat ids, which is what the probe, the evaluation and the rollout workers start from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from editcredit.policy.chat import ChatTemplate
from editcredit.policy.generation import Generator, TransformersGenerator
from editcredit.policy.vllm_backend import VLLMGenerator, VLLMSettings

BACKENDS = ("transformers", "static", "fast", "vllm")


@dataclass(frozen=True)
class FastSettings:
    """The config block ``generation.fast``."""

    compile: bool = True
    """Fuse the decode step with ``torch.compile`` before its CUDA graph is captured (a one-off
    compilation of tens of seconds per process; the same numbers up to float rounding)."""

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> FastSettings:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - {"compile"})
        if unknown:
            raise ValueError(f"config generation.fast: unknown keys {unknown}; known compile")
        value = cfg.get("compile", True)
        if not isinstance(value, bool):
            raise ValueError(f"config generation.fast.compile: {value!r} is not a boolean")
        return cls(compile=value)


@dataclass(frozen=True)
class GenerationSettings:
    """The config block ``generation``."""

    backend: str = "transformers"
    """'transformers' (CPU or GPU, any causal LM), 'static' (CPU or GPU, Qwen2/Llama: the same
    sampler, each distinct prompt encoded alone and every row decoded over a static KV cache),
    'fast' (transformers weights, static KV cache and a CUDA graph per token on GPU;
    Qwen2/Llama) or 'vllm' (GPU, for scale)."""
    fast: FastSettings = field(default_factory=FastSettings)
    """Settings of the fast backend."""
    vllm: VLLMSettings = field(default_factory=VLLMSettings)
    """Engine settings of the vLLM backend (ignored by transformers)."""

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> GenerationSettings:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - {"backend", "fast", "vllm"})
        if unknown:
            raise ValueError(
                f"config generation: unknown keys {unknown}; known backend, fast, vllm"
            )
        backend = cfg.get("backend", "transformers")
        if backend not in BACKENDS:
            raise ValueError(f"config generation.backend: {backend!r} is not one of {BACKENDS}")
        return cls(
            backend=backend,
            fast=FastSettings.from_config(cfg.get("fast")),
            vllm=VLLMSettings.from_config(cfg.get("vllm")),
        )


def load_hf_model(model_dir: str | Path, device: torch.device | str) -> torch.nn.Module:
    """An HF causal LM on ``device`` in eval mode (bf16 on CUDA, fp32 on CPU)."""
    from transformers import AutoModelForCausalLM

    device = torch.device(device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    return AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype).to(device).eval()


def make_generator(
    backend: str,
    model_dir: str | Path,
    device: torch.device | str,
    *,
    stop_ids: int | Sequence[int],
    pad_id: int,
    model: torch.nn.Module | None = None,
    vllm: VLLMSettings | Mapping[str, Any] | None = None,
    fast: FastSettings | Mapping[str, Any] | None = None,
) -> Generator:
    """A generator of ``backend`` for the weights of ``model_dir``.

    transformers, static and fast: wrap ``model`` when given (it must already be on ``device``),
    else load ``model_dir``. vllm: builds an engine from ``model_dir`` on the job's visible
    GPU(s); it needs a CUDA device (request a GPU for the rule: ``training.gpu``,
    ``evaluation.gpu`` or ``models.<name>.gpu``). Push later weights with
    ``VLLMGenerator.load_weights``.
    """
    device = torch.device(device)
    if backend == "transformers":
        if model is None:
            model = load_hf_model(model_dir, device)
        return TransformersGenerator(model, stop_ids, pad_id)
    if backend == "static":
        from editcredit.policy.static_generation import StaticCacheGenerator

        if model is None:
            model = load_hf_model(model_dir, device)
        return StaticCacheGenerator(model, stop_ids, pad_id)
    if backend == "fast":
        from editcredit.policy.fast_decode import FastGenerator

        if model is None:
            model = load_hf_model(model_dir, device)
        settings = fast if isinstance(fast, FastSettings) else FastSettings.from_config(fast)
        return FastGenerator(model, stop_ids, pad_id, compile=settings.compile)
    if backend == "vllm":
        if device.type != "cuda":
            raise ValueError(
                f"generation.backend 'vllm' needs a CUDA device, this job has {device} "
                "(give the rule a GPU, or use generation.backend: transformers)"
            )
        settings = vllm if isinstance(vllm, VLLMSettings) else VLLMSettings.from_config(vllm)
        return VLLMGenerator.from_pretrained(model_dir, stop_ids, pad_id, settings)
    raise ValueError(f"config generation.backend: {backend!r} is not one of {BACKENDS}")


def load_generator(
    model_dir: str | Path,
    device: torch.device | str,
    generation: GenerationSettings | Mapping[str, Any] | None = None,
) -> tuple[Generator, ChatTemplate]:
    """The generator of the configured backend and the model's chat template (its stop ids end
    a turn)."""
    from transformers import AutoTokenizer

    settings = (
        generation
        if isinstance(generation, GenerationSettings)
        else GenerationSettings.from_config(generation)
    )
    chat = ChatTemplate(AutoTokenizer.from_pretrained(str(model_dir)))
    generator = make_generator(
        settings.backend,
        model_dir,
        device,
        stop_ids=chat.stop_ids,
        pad_id=chat.pad,
        vllm=settings.vllm,
        fast=settings.fast,
    )
    return generator, chat
