"""Pick the generation backend by config (``generation.backend``): transformers, static, fast
or vLLM.

All sit behind the one generation interface (``editcredit.policy.generation.Generator``).
``make_generator`` builds one for an HF model directory (or wraps a transformers model already
loaded, e.g. a rollout worker's policy copy); ``load_generator`` also loads the tokenizer and its
chat ids, which is what the probe, the evaluation and the rollout workers start from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

from editcredit.config import schema_of, section_config
from editcredit.policy.chat import ChatTemplate
from editcredit.policy.generation import Generator, TransformersGenerator
from editcredit.policy.vllm_backend import VLLMGenerator, VLLMSettings, vllm_settings
from editcredit.settings import FastBackendSettings, GeneratorSettings

BACKENDS = tuple(schema_of("generation.backend")["enum"])

#: ``generation.fast``, as the settings tree types it.
FastSettings = FastBackendSettings


@dataclass(frozen=True)
class GenerationSettings:
    """The config block ``generation`` as the backends take it: the typed section
    (:class:`editcredit.settings.GeneratorSettings`), its engine settings as
    :class:`~editcredit.policy.vllm_backend.VLLMSettings`. Keys, defaults and their meaning are
    config/schema.yaml's."""

    backend: str
    fast: FastSettings
    vllm: VLLMSettings

    @classmethod
    def from_config(cls, cfg: GeneratorSettings | Mapping[str, Any] | None) -> GenerationSettings:
        """From the typed section, or from a mapping validated (and its defaults filled) by the
        schema's ``generation``; ConfigError (a ValueError) names a bad key."""
        if not isinstance(cfg, GeneratorSettings):
            cfg = GeneratorSettings.from_mapping(section_config("generation", cfg), "generation")
        return cls(backend=cfg.backend, fast=cfg.fast, vllm=_vllm_settings(cfg.vllm))


def _fast_settings(fast: FastSettings | Mapping[str, Any] | None) -> FastSettings:
    if isinstance(fast, FastSettings):
        return fast
    return FastSettings.from_mapping(section_config("generation.fast", fast), "generation.fast")


def _vllm_settings(vllm: VLLMSettings | Mapping[str, Any] | None) -> VLLMSettings:
    return vllm if isinstance(vllm, VLLMSettings) else vllm_settings(vllm)


def load_hf_model(model_dir: str | Path, device: torch.device | str) -> torch.nn.Module:
    """An HF causal LM on ``device`` in eval mode (bf16 on CUDA, fp32 on CPU)."""
    from transformers import AutoModelForCausalLM

    device = torch.device(device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    # read as an nn.Module: mypy takes PreTrainedModel.to (a decorated method) for an unbound
    # function
    model = cast(torch.nn.Module, AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype))
    return model.to(device).eval()


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
        return FastGenerator(model, stop_ids, pad_id, compile=_fast_settings(fast).compile)
    if backend == "vllm":
        if device.type != "cuda":
            raise ValueError(
                f"generation.backend 'vllm' needs a CUDA device, this job has {device} "
                "(give the rule a GPU, or use generation.backend: transformers)"
            )
        return VLLMGenerator.from_pretrained(model_dir, stop_ids, pad_id, _vllm_settings(vllm))
    raise ValueError(f"config generation.backend: {backend!r} is not one of {BACKENDS}")


def load_generator(
    model_dir: str | Path,
    device: torch.device | str,
    generation: GenerationSettings | GeneratorSettings | Mapping[str, Any] | None = None,
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
