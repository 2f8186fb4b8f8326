"""The vLLM generation backend: the GPU backend for scale, behind the one generation interface.

Token ids in, token ids and log-probs out, exactly as ``TransformersGenerator``:

- the log-probs are those of the sampling distribution, ``log_softmax(logits / T)``: the engine
  is built with ``logprobs_mode="processed_logprobs"`` (vLLM >= 0.10.2); vLLM's default
  (``raw_logprobs``) would return the untempered model's log-probs, and the importance ratios
  of the loss (METHOD §4) would be wrong at any T != 1;
- only the chat template's stop ids end a completion (its end-of-turn token, e.g. ``<|im_end|>``,
  and the tokenizer's eos: ``ignore_eos`` plus ``stop_token_ids``),
  and the model directory's ``generation_config.json`` is not applied
  (``generation_config="vllm"``): no top-k, top-p or penalties slip into the sampling;
- every prompt draws with its own seed, derived from the call's seed and the prompt's index,
  so a completion does not depend on which other prompts share its batch (on the same GPU
  numerics);
- a completion ends with a stop id when ``finished``; one cut by ``max_new_tokens`` is
  unfinished.

Weights come from an HF directory (``runs/{run}/step_{N}/model`` or ``models/base/{name}``);
``load_weights`` pushes a trainer's state dict into the running engine between steps.

vLLM is an optional extra (``pip install 'editcredit[vllm]'``, CUDA only); this module imports
it only when an engine is built, so the adapter logic is tested without it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from editcredit.config import section_config
from editcredit.policy.generation import GenerationOutput, stop_tuple
from editcredit.settings import VLLMBackendSettings

MIN_VLLM = "0.10.2"  # logprobs_mode="processed_logprobs"


class VLLMOutputError(RuntimeError):
    """A vLLM result that cannot be mapped to a GenerationOutput (named by prompt index)."""


#: ``generation.vllm``, as the settings tree types it: the engine's settings (sampling comes from
#: each call); config/schema.yaml holds each key's meaning, default and bounds.
VLLMSettings = VLLMBackendSettings


def vllm_settings(cfg: Mapping[str, Any] | None) -> VLLMSettings:
    """The engine settings of a ``generation.vllm`` mapping, validated and its defaults filled by
    the schema (None: every default); ConfigError (a ValueError) names a bad key."""
    section = section_config("generation.vllm", cfg)
    return VLLMSettings.from_mapping(section, "generation.vllm")


def request_seed(seed: int, index: int) -> int:
    """The seed of prompt ``index`` of a call seeded ``seed`` (63 bits, stable across runs)."""
    digest = hashlib.sha256(f"vllm:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def engine_kwargs(model_dir: str | Path, settings: VLLMSettings) -> dict[str, Any]:
    """Keyword arguments of ``vllm.LLM`` for an HF model directory."""
    kwargs: dict[str, Any] = {
        "model": str(model_dir),
        "tokenizer": str(model_dir),
        "dtype": settings.dtype,
        "gpu_memory_utilization": settings.gpu_memory_utilization,
        "tensor_parallel_size": settings.tensor_parallel_size,
        "enforce_eager": settings.enforce_eager,
        "enable_prefix_caching": settings.enable_prefix_caching,
        "seed": settings.seed,
        # log-probs of the sampling distribution (after temperature), not of the raw logits
        "logprobs_mode": "processed_logprobs",
        # the model directory's generation_config.json must not change the sampling
        "generation_config": "vllm",
    }
    if settings.max_model_len:
        kwargs["max_model_len"] = settings.max_model_len
    return kwargs


def sampling_kwargs(
    max_new_tokens: int, temperature: float, seed: int, stop_ids: int | Sequence[int]
) -> dict[str, Any]:
    """Keyword arguments of ``vllm.SamplingParams`` for one prompt: pure temperature sampling,
    the sampled token's log-prob, and a stop at the chat template's stop ids only."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (sampling with recorded log-probs)")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    return {
        "n": 1,
        "temperature": float(temperature),
        "top_p": 1.0,
        "min_p": 0.0,
        "max_tokens": int(max_new_tokens),
        "seed": int(seed),
        "logprobs": 0,  # the sampled token's log-prob only
        "ignore_eos": True,  # the engine's idea of eos does not stop a turn ...
        "stop_token_ids": list(stop_tuple(stop_ids)),  # ... the chat template's stop ids do
        "detokenize": False,
        "skip_special_tokens": False,
    }


def _token_logprob(entry: Any, token: int, index: int, position: int) -> float:
    """The log-prob of ``token`` from one position's vLLM log-prob entry."""
    try:
        value = entry[token]
    except (KeyError, IndexError, TypeError) as exc:
        raise VLLMOutputError(
            f"prompt {index}: no log-prob for sampled token {token} at position {position}"
        ) from exc
    return float(getattr(value, "logprob", value))


def to_output(
    request_output: Any, stop_ids: int | Sequence[int], index: int = 0
) -> GenerationOutput:
    """Map one ``vllm.RequestOutput`` (its first completion) to a GenerationOutput.

    The ids are cut after the first stop id (kept, with its log-prob): ``finished`` is whether a
    stop id was sampled. A stop without one means the engine was built or called otherwise than
    here.
    """
    stops = stop_tuple(stop_ids)
    completions = getattr(request_output, "outputs", None)
    if not completions:
        raise VLLMOutputError(f"prompt {index}: vLLM returned no completion")
    completion = completions[0]
    ids = [int(t) for t in completion.token_ids]
    entries = completion.logprobs
    if entries is None:
        raise VLLMOutputError(f"prompt {index}: vLLM returned no log-probs (logprobs=None)")
    if len(entries) < len(ids):
        raise VLLMOutputError(
            f"prompt {index}: {len(ids)} tokens but {len(entries)} log-prob entries"
        )
    cut = next((k for k, t in enumerate(ids) if t in stops), None)
    if cut is not None:
        ids = ids[: cut + 1]
        finished = True
    else:
        finished = False
        reason = getattr(completion, "finish_reason", None)
        if reason not in (None, "length"):
            raise VLLMOutputError(
                f"prompt {index}: finished ({reason!r}, stop_reason "
                f"{getattr(completion, 'stop_reason', None)!r}) without a stop id {list(stops)}"
            )
    logprobs = [_token_logprob(entries[i], t, index, i) for i, t in enumerate(ids)]
    return GenerationOutput(ids, logprobs, finished)


def _load_weights_on_worker(worker: Any, weights: list[tuple[str, Any]]) -> int:
    """Runs inside each vLLM worker (``collective_rpc``): load HF-named tensors into its model."""
    runner = worker.model_runner
    model = runner.get_model() if hasattr(runner, "get_model") else runner.model
    model.load_weights(weights=weights)
    return len(weights)


class VLLMGenerator:
    """Sampling with a vLLM engine (``vllm.LLM``); see the module docstring for the contract.

    ``llm``, ``sampling_params`` and ``tokens_prompt`` are the engine and vLLM's
    ``SamplingParams`` / ``TokensPrompt`` classes; tests pass fakes of the same shape.
    """

    def __init__(
        self,
        llm: Any,
        stop_ids: int | Sequence[int],
        pad_id: int,
        *,
        sampling_params: Any,
        tokens_prompt: Any,
    ) -> None:
        self.llm = llm
        self.stop_ids = stop_tuple(stop_ids)
        self.pad_id = int(pad_id)
        self._sampling_params = sampling_params
        self._tokens_prompt = tokens_prompt

    @classmethod
    def from_pretrained(
        cls,
        model_dir: str | Path,
        stop_ids: int | Sequence[int],
        pad_id: int,
        settings: VLLMSettings | None = None,
    ) -> VLLMGenerator:
        """Build an engine on the visible GPU(s) from an HF model directory."""
        settings = settings or vllm_settings(None)
        if not Path(model_dir, "config.json").is_file():
            raise FileNotFoundError(f"{model_dir}: not an HF model directory (no config.json)")
        if settings.in_process:
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        try:
            import vllm
            from vllm import LLM, SamplingParams
            from vllm.inputs import TokensPrompt
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                "generation.backend 'vllm' needs vLLM on a CUDA machine: "
                f"pip install 'editcredit[vllm]' (vllm>={MIN_VLLM})"
            ) from exc
        _check_version(getattr(vllm, "__version__", "0"))
        llm = LLM(**engine_kwargs(model_dir, settings))
        return cls(
            llm, stop_ids, pad_id, sampling_params=SamplingParams, tokens_prompt=TokensPrompt
        )

    def generate(
        self, prompts: list[list[int]], max_new_tokens: int, temperature: float, seed: int
    ) -> list[GenerationOutput]:
        if not prompts:
            return []
        params = [
            self._sampling_params(
                **sampling_kwargs(max_new_tokens, temperature, request_seed(seed, i), self.stop_ids)
            )
            for i in range(len(prompts))
        ]
        inputs = [self._tokens_prompt(prompt_token_ids=list(p)) for p in prompts]
        outputs = self.llm.generate(inputs, params, use_tqdm=False)
        if len(outputs) != len(prompts):
            raise VLLMOutputError(f"{len(prompts)} prompts but {len(outputs)} vLLM results")
        return [to_output(out, self.stop_ids, i) for i, out in enumerate(outputs)]

    def load_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Push new weights (HF parameter names, e.g. a trainer's state dict) into the engine
        and drop the prefix cache computed with the old ones."""
        weights = [(name, t.detach().cpu()) for name, t in state_dict.items()]
        self.llm.collective_rpc(_load_weights_on_worker, args=(weights,))
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Release the engine (best effort: vLLM frees GPU memory when it is collected)."""
        llm, self.llm = self.llm, None
        if llm is None:
            return
        engine = getattr(llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
        if callable(shutdown):
            shutdown()
        del llm


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _check_version(version: str) -> None:
    if _version_tuple(version) < _version_tuple(MIN_VLLM):
        raise ImportError(
            f"vLLM {version} is too old: the backend needs >= {MIN_VLLM} "
            "(logprobs_mode='processed_logprobs', the log-probs of the tempered distribution)"
        )
