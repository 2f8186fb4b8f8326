"""The GPU memory a job holds: weights, KV caches, prefill and update working sets (pure).

One arithmetic serves the two sides of the GPU budget. The workflow declares each GPU rule's
``gpu_mem_mb`` from it (:func:`rule_gpu_mem_mb`, read by ``rules/common.smk``), so Snakemake
schedules jobs against a card's memory; the generator sizes its batch, its prefill chunks and
its set of captured decode graphs to the same budget at run time
(:func:`generation_plan`), and the job's allocator is capped at it
(``editcredit.policy.devices``), so an overrun is a defect that shows, never a scheduling
accident.

Every figure is an upper estimate in bytes of what PyTorch's caching allocator holds; what a
process holds outside the allocator (the CUDA context, the kernels it loads, the libraries'
handles, its captured graphs' exec objects) is :data:`PROCESS_OVERHEAD_MB`, measured per phase
on an H100 by ``benchmarks/bench_gpu_generation.py --eval-job --phases``. Tested by tables in
``tests/policy/test_gpu_memory.py``; checked against measured peaks on an H100 in
``docs/scale.md`` ("Profiles and GPUs").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIB = 2**20
PROCESS_OVERHEAD_MB = 1024
"""What one GPU process holds outside its allocator's cap, so outside every estimate below.
Measured on an H100 (torch 2.11, CUDA 12, lazy module loading, the default) over one
evaluation job's generation: the CUDA context as created, 615 MiB; then the kernels loaded
as they are first used and cuBLAS's handles, up to 781 MiB in all by the end (81 graphs
captured, 6 kept: their exec objects add under 30 MiB; a policy update's kernels a few MiB
more). Rounded up to 1,024 MiB for the kernels other jobs load. ``CUDA_MODULE_LOADING=EAGER``
loads every kernel of the libraries at once (1,257 MiB at the context, 1,853 MiB by the end):
it is not supported on a shared card."""
ROUND_MB = 256
"""Declared budgets are rounded up to a multiple of this."""
PREFILL_ALLOWANCE = 1024 * MIB
"""Working memory a generator may spend on one prefill chunk (at least one row always)."""
GRAPH_SLOTS = 2
"""Decode slots (KV cache, static buffers and captured graph) a budget keeps at full size."""
LENGTH_BUCKET = 128  # the fast generator's cache length bucket
NEW_BUCKET = 16  # and its step chunk
PLAN_HEADROOM = 0.9
"""The share of its budget a generator plans to fill (the rest absorbs fragmentation)."""
BACKENDS_ON_GPU = ("transformers", "static", "fast")


@dataclass(frozen=True)
class ModelShape:
    """The sizes of a Qwen2/Llama-style causal LM that set its memory."""

    vocab: int
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    tied: bool = True

    @property
    def q_width(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def parameters(self) -> int:
        """Parameters: embeddings, q/k/v (with biases), o, gate/up/down and norms per layer,
        the final norm and an untied head."""
        h, q, kv = self.hidden, self.q_width, self.kv_width
        layer = h * (q + 2 * kv) + (q + 2 * kv) + q * h + 3 * h * self.intermediate + 2 * h
        head = 0 if self.tied else self.vocab * h
        return self.layers * layer + self.vocab * h + head + h

    @property
    def fused_parameters(self) -> int:
        """The fast decoder's concatenated q/k/v and gate/up copies."""
        h = self.hidden
        per_layer = h * (self.q_width + 2 * self.kv_width) + 2 * h * self.intermediate
        return self.layers * per_layer

    @classmethod
    def from_architecture(cls, arch: Any, vocab: int) -> ModelShape:
        """From ``models.<name>.architecture`` (the tiny policy, tied embeddings)."""
        heads = int(arch.num_heads)
        return cls(
            vocab=int(vocab),
            hidden=int(arch.hidden_size),
            intermediate=int(arch.intermediate_size),
            layers=int(arch.num_layers),
            heads=heads,
            kv_heads=int(arch.num_kv_heads),
            head_dim=int(arch.hidden_size) // heads,
        )

    @classmethod
    def from_hf_config(cls, cfg: Mapping[str, Any]) -> ModelShape:
        """From a Hugging Face ``config.json`` of a Qwen2/Llama-style model."""
        heads = int(cfg["num_attention_heads"])
        hidden = int(cfg["hidden_size"])
        return cls(
            vocab=int(cfg["vocab_size"]),
            hidden=hidden,
            intermediate=int(cfg["intermediate_size"]),
            layers=int(cfg["num_hidden_layers"]),
            heads=heads,
            kv_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            tied=bool(cfg.get("tie_word_embeddings", False)),
        )


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def bucket_rows(rows: int) -> int:
    """The fast generator's batch bucket: the next power of two."""
    return 1 << (max(1, rows) - 1).bit_length()


def bucket_length(width: int, new: int) -> int:
    """The fast generator's cache length for prompts of ``width`` and ``new`` tokens: the longest
    sequence of the call, rounded up to the length bucket (never the model's maximum)."""
    return _round_up(width + _round_up(new, NEW_BUCKET), LENGTH_BUCKET)


def kv_bytes(shape: ModelShape, rows: int, length: int, dtype_bytes: int) -> int:
    """Keys and values of ``rows`` sequences of ``length`` columns, every layer."""
    return 2 * shape.layers * rows * shape.kv_width * length * dtype_bytes


def decode_slot_bytes(shape: ModelShape, rows: int, length: int, new: int, dtype_bytes: int) -> int:
    """One decode slot of ``rows`` x ``length``: its KV cache, its static buffers (logits, a
    chunk of sampling noise, tokens, log-probs, masks) and one decode step's working set (the
    private pool of its captured graph: the step's attention scores, MLP and logits)."""
    V, H, L = shape.vocab, shape.heads, length
    static = rows * (V * dtype_bytes + NEW_BUCKET * V * 4 + L + new * 12 + 64)
    step = rows * (
        4 * H * L * 4  # scores, masked, joined with the own column, softmax (fp32)
        + 4 * shape.intermediate * dtype_bytes
        + 3 * V * 4  # log-softmax and the noise race
        + 2 * shape.layers * shape.kv_width * dtype_bytes  # the step's new K/V
        + 8 * shape.hidden * 4
    )
    return kv_bytes(shape, rows, length, dtype_bytes) + static + step


def prefill_row_bytes(shape: ModelShape, width: int, length: int, dtype_bytes: int) -> int:
    """The working set of one row of an eager prefill of ``width`` tokens over a cache of
    ``length`` columns (one layer's live tensors: attention scores as the math kernel holds
    them with its mask, the MLP, the residual stream)."""
    S, L, H = width, length, shape.heads
    attention = H * S * L * (3 * dtype_bytes + 4) + 6 * S * L
    mlp = 4 * S * shape.intermediate * dtype_bytes
    stream = S * (4 * shape.hidden * 4 + 3 * (shape.q_width + 2 * shape.kv_width) * dtype_bytes)
    return attention + mlp + stream + shape.vocab * 4


def weight_bytes(shape: ModelShape, dtype_bytes: int, fused: bool) -> int:
    """The model's weights, and the fast decoder's fused copies with ``fused``."""
    n = shape.parameters + (shape.fused_parameters if fused else 0)
    return n * dtype_bytes


def generation_bytes(
    shape: ModelShape, rows: int, context: int, new: int, dtype_bytes: int, backend: str
) -> int:
    """What a generator holds at most for calls of up to ``rows`` sequences of ``context``
    tokens (prompt and reply), ``new`` of them sampled: its weights, :data:`GRAPH_SLOTS`
    decode slots of the largest shape, and a prefill chunk within
    :data:`PREFILL_ALLOWANCE` (one row at least). ``transformers`` prefills the whole
    left-padded batch at once and grows its cache by concatenation (two copies at a step)."""
    if backend not in BACKENDS_ON_GPU:
        raise ValueError(f"no GPU memory estimate for generation backend {backend!r}")
    if backend == "transformers":
        kv = kv_bytes(shape, rows, context, dtype_bytes)
        prefill = rows * prefill_row_bytes(shape, context, context, dtype_bytes)
        return weight_bytes(shape, dtype_bytes, False) + 2 * kv + prefill
    length = bucket_length(context - new, new) if backend == "fast" else context + context // 2
    batch = bucket_rows(rows) if backend == "fast" else rows
    slots = (GRAPH_SLOTS if backend == "fast" else 1) * decode_slot_bytes(
        shape, batch, length, new, dtype_bytes
    )
    row = prefill_row_bytes(shape, context, length, dtype_bytes)
    prefill = max(row, min(rows * row, PREFILL_ALLOWANCE))
    return weight_bytes(shape, dtype_bytes, True) + slots + prefill


ACTIVATION_MARGIN = 1.25
"""Headroom on the update's activations (allocator rounding, kernels' workspaces)."""


def update_bytes(
    shape: ModelShape, sequences: int, length: int, activation_bytes: int = 2, copies: int = 4
) -> int:
    """A policy update: fp32 weights, gradients and AdamW's two moments (``copies`` fp32 copies
    of the parameters; 5 with a weight average) and the activations of a micro-batch of
    ``sequences`` x ``length`` tokens, kept in ``activation_bytes`` (2 under bf16 autocast, 4
    in fp32) for the backward pass. Per token and layer: the fp32 residual stream and norms,
    q/k/v, the attention output, the MLP's four intermediates (the attention kernel keeps
    O(length) state under autocast; in fp32 it is the math kernel, which keeps each layer's
    scores and probabilities, heads x length² each, as measured on an H100); the logits of
    every position in fp32 for the loss; all of it with :data:`ACTIVATION_MARGIN`."""
    h, inter, a = shape.hidden, shape.intermediate, activation_bytes
    per_token_layer = 6 * h * 4 + a * (shape.q_width + 2 * shape.kv_width + 2 * shape.q_width)
    per_token_layer += a * 4 * inter + a * h  # gate, up, silu, product; the input copies
    tokens = sequences * length
    activations = tokens * shape.layers * per_token_layer
    if activation_bytes == 4:
        activations += sequences * shape.layers * shape.heads * length * length * 4 * 2
    logits = tokens * shape.vocab * 4 * 3  # logits, log-softmax, their gradient
    return 4 * copies * shape.parameters + int(ACTIVATION_MARGIN * (activations + logits))


@dataclass(frozen=True)
class GpuJob:
    """What one GPU job holds: a generator of ``rows`` x ``context`` (``new`` sampled) in
    ``dtype_bytes``, and for training a policy update of ``update_sequences`` x
    ``context`` tokens beside it (0: none), its activations in ``update_bytes`` and
    ``update_copies`` fp32 copies of the parameters (:func:`update_bytes`)."""

    rows: int
    context: int
    new: int
    backend: str
    dtype_bytes: int = 2
    update_sequences: int = 0
    update_activation_bytes: int = 2
    update_copies: int = 4


def job_bytes(shape: ModelShape, job: GpuJob) -> int:
    """The allocator's most for ``job`` (generation, plus the update where it has one)."""
    total = generation_bytes(shape, job.rows, job.context, job.new, job.dtype_bytes, job.backend)
    if job.update_sequences:
        total += update_bytes(
            shape,
            job.update_sequences,
            job.context,
            job.update_activation_bytes,
            job.update_copies,
        )
    return total


def job_mb(shape: ModelShape, job: GpuJob) -> int:
    """The job's declared GPU memory in MiB: :func:`job_bytes` and the process's overhead
    outside the allocator (:data:`PROCESS_OVERHEAD_MB`), rounded up to :data:`ROUND_MB`."""
    return _round_up(math.ceil(job_bytes(shape, job) / MIB) + PROCESS_OVERHEAD_MB, ROUND_MB)


def allocator_budget_bytes(declared_mb: int) -> int:
    """The cap a job sets on its allocator: its declaration less the process's overhead
    outside the allocator (:data:`PROCESS_OVERHEAD_MB`), so the whole process stays inside
    its declaration."""
    return max(0, declared_mb - PROCESS_OVERHEAD_MB) * MIB


# --- run time: a generator's plan inside its budget ------------------------------------------


@dataclass(frozen=True)
class GenerationPlan:
    """How a generator runs one call inside its budget: ``rows`` sequences a pass (a call of
    more is split), ``prefill_rows`` a prefill chunk."""

    rows: int
    prefill_rows: int


def generation_plan(
    shape: ModelShape,
    rows: int,
    width: int,
    new: int,
    dtype_bytes: int,
    free_bytes: int,
) -> GenerationPlan:
    """The largest pass (a power of two up to ``rows``) whose decode slot and one prefill row
    fit in ``free_bytes``, and as many prefill rows as then fit. A ValueError when not even
    one row fits: the declared budget is too small for the model (a defect, not a retry)."""
    length = bucket_length(width, new)
    row = prefill_row_bytes(shape, width, length, dtype_bytes)
    batch = bucket_rows(rows)
    while True:
        slot = decode_slot_bytes(shape, batch, length, new, dtype_bytes)
        if slot + row <= free_bytes:
            break
        if batch == 1:
            raise ValueError(
                f"GPU budget too small: one row of {width} + {new} tokens needs "
                f"{(slot + row) / MIB:.0f} MiB, {free_bytes / MIB:.0f} MiB are free in the "
                "job's declared gpu_mem_mb (raise resources.<rule>.gpu_mem_mb)"
            )
        batch //= 2
    passes = min(rows, batch)
    prefill = max(1, min(passes, (free_bytes - slot) // row))
    return GenerationPlan(rows=passes, prefill_rows=int(prefill))


# --- the workflow's view: each GPU rule's declaration -----------------------------------------

GPU_RULES = (
    "base_model",
    "probe",
    "training_pool",
    "train_segment",
    "control_replay",
    "eval_model",
)


def model_shape(settings: Any, name: str) -> ModelShape | None:
    """The shape of ``models.<name>``: its architecture (trained here) or the ``config.json``
    of its imported directory; None when neither is known before the run."""
    model = settings.models[name]
    if model.architecture is not None and model.architecture.hidden_size:
        return ModelShape.from_architecture(model.architecture, model.tokenizer_vocab + 64)
    if model.path and (Path(model.path) / "config.json").is_file():
        return ModelShape.from_hf_config(json.loads((Path(model.path) / "config.json").read_text()))
    return None


def rule_job(settings: Any, rule: str, model: str | None = None) -> GpuJob:
    """What a job of ``rule`` holds on its GPU, from the config: the generation batch (the
    evaluation batch, a training group; the probe and the pool screen are split into passes of
    the evaluation batch), the agent's context and reply length, the backend, and for
    training the update's micro-batch (bf16 autocast). ``base_model`` fits its policy in fp32
    (AdamW and a weight average) on batches of the SFT size and its copy drills."""
    agent, gen = settings.agent, settings.generation
    context, new = int(agent.max_context_tokens), int(agent.max_new_tokens)
    backend = gen.backend if gen.backend in BACKENDS_ON_GPU else "fast"
    if rule == "eval_model" or rule in ("probe", "training_pool"):
        return GpuJob(int(settings.evaluation.batch_size), context, new, backend)
    if rule in ("train_segment", "control_replay"):
        grpo = settings.training.grpo  # a mapping (TrainConfig's fields)
        sequences = int(grpo["micro_batch_size"])
        if grpo.get("micro_batch_tokens"):
            sequences = max(1, min(sequences, int(grpo["micro_batch_tokens"]) // context))
        # the rollout worker decodes its fp32 copy of the policy
        return GpuJob(int(grpo["group_size"]), context, new, backend, 4, sequences)
    if rule == "base_model":
        sft = settings.models[model or settings.training.model].sft
        batch = int(sft.batch_size) if sft and sft.batch_size else 8
        batch += int(sft.copy_rows or 0) if sft else 0
        copies = 5 if sft and sft.ema_decay else 4
        return GpuJob(1, context, new, "static", 4, batch, 4, copies)
    raise ValueError(f"{rule!r} is not a GPU rule ({', '.join(GPU_RULES)})")


def rule_gpu_mem_mb(settings: Any, rule: str, model: str | None = None, gpus: int = 1) -> int:
    """``rule``'s declared GPU memory (MiB, all its GPUs together): 0 without a GPU;
    ``resources.<rule>.gpu_mem_mb`` where set; else :func:`job_mb` of :func:`rule_job` for
    ``model`` (the training model by default), on each of ``gpus`` devices. 0 also where the
    model's shape is unknown before the run or the backend sizes itself (vLLM): such a job
    takes a whole device."""
    if gpus <= 0:
        return 0
    override = settings.resources.get(rule)
    if override is not None and getattr(override, "gpu_mem_mb", None):
        return int(override.gpu_mem_mb)
    if settings.generation.backend == "vllm":
        return 0
    shape = model_shape(settings, model or settings.training.model)
    if shape is None:
        return 0
    return gpus * job_mb(shape, rule_job(settings, rule, model))


def jobs_at_once(card_mb: int, job_mb_: int, cap: int | None = None) -> int:
    """How many jobs declaring ``job_mb_`` fit on a card of ``card_mb`` (``cap``: another
    limit, e.g. the cores); a job declaring 0 takes the card alone."""
    n = 1 if job_mb_ <= 0 else card_mb // job_mb_
    return min(n, cap) if cap is not None else n
