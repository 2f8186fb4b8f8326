"""The GPU memory arithmetic (editcredit.policy.gpu_memory): model sizes against real models,
KV caches against the fast decoder's, budgets and plans by table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from transformers import Qwen2Config, Qwen2ForCausalLM

from editcredit.config import validate_config
from editcredit.policy import gpu_memory as gm
from editcredit.policy.fast_decode import Qwen2Decoder
from editcredit.settings import Settings

MIB = 2**20
REPO = Path(__file__).resolve().parents[2]
# the embedded default's policy, the GPU box's larger one, and an untied 4-layer model
DEFAULT = gm.ModelShape(vocab=2048, hidden=128, intermediate=512, layers=2, heads=4,
                        kv_heads=2, head_dim=32)  # fmt: skip
LARGE = gm.ModelShape(vocab=2048, hidden=512, intermediate=2048, layers=8, heads=8,
                      kv_heads=2, head_dim=64)  # fmt: skip
UNTIED = gm.ModelShape(vocab=1000, hidden=96, intermediate=256, layers=4, heads=6,
                       kv_heads=3, head_dim=16, tied=False)  # fmt: skip


def _hf(shape: gm.ModelShape) -> Qwen2ForCausalLM:
    cfg = Qwen2Config(
        vocab_size=shape.vocab,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        tie_word_embeddings=shape.tied,
    )
    return Qwen2ForCausalLM(cfg)


@pytest.mark.parametrize("shape", [DEFAULT, LARGE, UNTIED])
def test_parameters_are_those_of_the_model(shape):
    model = _hf(shape)
    assert shape.parameters == sum(p.numel() for p in model.parameters())
    assert gm.ModelShape.from_hf_config(model.config.to_dict()) == shape


def test_the_larger_policy_is_the_31_5m_of_the_preset():
    assert round(LARGE.parameters / 1e6, 1) == 31.5


@pytest.mark.parametrize(
    ("shape", "rows", "length", "dtype", "mib"),
    [
        (LARGE, 128, 2176, 2, 1088.0),  # an evaluation call's cache in bf16
        (LARGE, 8, 2176, 4, 136.0),  # a training group's in fp32
        (DEFAULT, 128, 2176, 4, 272.0),
        (UNTIED, 1, 1024, 2, 0.75),
    ],
)
def test_kv_cache_bytes(shape, rows, length, dtype, mib):
    assert gm.kv_bytes(shape, rows, length, dtype) / MIB == mib


@pytest.mark.parametrize("shape", [DEFAULT, UNTIED])
def test_kv_bytes_are_the_fast_decoders_cache(shape):
    model = _hf(shape)
    decoder = Qwen2Decoder(model, batch=3, max_len=40)
    held = decoder.k_cache.numel() + decoder.v_cache.numel()
    assert held * 4 == gm.kv_bytes(shape, 3, 40, 4)
    assert Qwen2Decoder.cache_elements(model, 3, 40) * 4 == gm.kv_bytes(shape, 3, 40, 4)


@pytest.mark.parametrize(
    ("width", "new", "length"),
    [(1, 1, 128), (96, 28, 128), (97, 28, 256), (100, 29, 256), (1984, 64, 2048), (1985, 64, 2176)],
)
def test_the_cache_spans_the_longest_sequence_of_the_call(width, new, length):
    assert gm.bucket_length(width, new) == length


@pytest.mark.parametrize(("rows", "bucket"), [(1, 1), (2, 2), (3, 4), (65, 128), (128, 128)])
def test_rows_bucket_to_a_power_of_two(rows, bucket):
    assert gm.bucket_rows(rows) == bucket


@pytest.mark.parametrize(
    ("job", "mb"),
    [
        (gm.GpuJob(128, 2048, 64, "fast"), 4352),  # eval_model, bf16
        (gm.GpuJob(8, 2048, 64, "fast", 4, 8), 8704),  # train_segment: fp32 worker + update
        (gm.GpuJob(1, 2048, 64, "static", 4, 8, 4, 5), 32256),  # base_model: fp32 SFT, EMA
        (gm.GpuJob(128, 2048, 64, "static"), 3840),
        (gm.GpuJob(128, 2048, 64, "transformers"), 54528),  # the whole batch prefilled at once
    ],
)
def test_declared_budgets_of_the_larger_policy(job, mb):
    got = gm.job_mb(LARGE, job)
    assert got == mb
    assert got % gm.ROUND_MB == 0
    assert got * MIB >= gm.job_bytes(LARGE, job) + gm.PROCESS_OVERHEAD_MB * MIB


def test_budgets_grow_with_rows_context_and_the_update():
    base = gm.GpuJob(32, 1024, 64, "fast")
    more_rows = gm.GpuJob(128, 1024, 64, "fast")
    longer = gm.GpuJob(32, 4096, 64, "fast")
    update = gm.GpuJob(32, 1024, 64, "fast", 2, 8)
    b = gm.job_bytes(LARGE, base)
    assert gm.job_bytes(LARGE, more_rows) > b
    assert gm.job_bytes(LARGE, longer) > b
    assert gm.job_bytes(LARGE, update) == b + gm.update_bytes(LARGE, 8, 1024)
    with pytest.raises(ValueError, match="vllm"):
        gm.job_bytes(LARGE, gm.GpuJob(8, 1024, 64, "vllm"))


@pytest.mark.parametrize(
    ("rows", "free_mib", "passes", "prefill"),
    [
        (128, 2900, 128, 4),  # the whole call in one pass, 4 rows a prefill chunk
        (128, 1600, 128, 1),
        (128, 1000, 64, 1),  # the cache of 128 rows does not fit: passes of 64
        (100, 2900, 100, 4),  # a pass never holds more rows than the call
        (3, 2900, 3, 3),
        (128, 2, None, None),  # not one row: a clear error
    ],
)
def test_a_generation_plan_fits_its_budget(rows, free_mib, passes, prefill):
    width, new = 2000, 64
    if passes is None:
        with pytest.raises(ValueError, match="GPU budget too small"):
            gm.generation_plan(LARGE, rows, width, new, 2, free_mib * MIB)
        return
    plan = gm.generation_plan(LARGE, rows, width, new, 2, free_mib * MIB)
    assert (plan.rows, plan.prefill_rows) == (passes, prefill)
    length = gm.bucket_length(width, new)
    held = gm.decode_slot_bytes(LARGE, gm.bucket_rows(plan.rows), length, new, 2)
    held += plan.prefill_rows * gm.prefill_row_bytes(LARGE, width, length, 2)
    assert held <= free_mib * MIB


def test_the_declared_budget_holds_the_generators_plan():
    """What a job declares leaves its generator, after its weights, room for the whole call in
    one pass: the declaration and the run-time plan are the same arithmetic."""
    job = gm.GpuJob(128, 2048, 64, "fast")
    budget = gm.allocator_budget_bytes(gm.job_mb(LARGE, job))
    weights = gm.weight_bytes(LARGE, 2, fused=True)
    free = int(budget * gm.PLAN_HEADROOM) - weights
    plan = gm.generation_plan(LARGE, 128, 2048 - 64, 64, 2, free)
    assert plan.rows == 128 and plan.prefill_rows >= 1


@pytest.mark.parametrize(
    ("card_mb", "job_mb", "fit"),
    [(81047, 4096, 19), (81047, 8448, 9), (143259, 4096, 34), (143259, 8448, 16),
     (81047, 4352, 18), (81047, 8704, 9), (143259, 4352, 32), (143259, 8704, 16),
     (81047, 0, 1), (81047, 90000, 0)],
)  # fmt: skip
def test_jobs_at_once_on_a_card(card_mb, job_mb, fit):
    assert gm.jobs_at_once(card_mb, job_mb) == fit
    assert gm.jobs_at_once(card_mb, job_mb, cap=8) == min(fit, 8)


def _merge(into: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def layered_settings(*presets: str, extra: dict[str, Any] | None = None) -> Settings:
    """config/config.yaml with ``presets`` and ``extra`` layered over it, as Snakemake reads it."""
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for preset in presets:
        _merge(cfg, yaml.safe_load((REPO / preset).read_text()))
    _merge(cfg, extra or {})
    return Settings.from_config(validate_config(cfg))


def test_rule_budgets_from_the_config():
    """The default config declares no GPU memory (no GPU); a GPU and the larger policy give the
    estimates above; resources.<rule>.gpu_mem_mb overrides; vLLM and unknown shapes take 0."""
    cpu = layered_settings()
    assert all(gm.rule_gpu_mem_mb(cpu, r, gpus=0) == 0 for r in gm.GPU_RULES)
    box = layered_settings("config/presets/gpu-box.yaml", "config/presets/tiny-large.yaml")
    assert gm.rule_gpu_mem_mb(box, "eval_model") == 4352
    assert gm.rule_gpu_mem_mb(box, "train_segment") == 8704
    assert gm.rule_gpu_mem_mb(box, "train_segment", gpus=2) == 2 * 8704
    assert gm.rule_gpu_mem_mb(box, "base_model", "tiny") == 32256
    over = layered_settings(
        "config/presets/gpu-box.yaml", extra={"resources": {"eval_model": {"gpu_mem_mb": 9000}}}
    )
    assert gm.rule_gpu_mem_mb(over, "eval_model") == 9000
    vllm = layered_settings(extra={"generation": {"backend": "vllm"}})
    assert gm.rule_gpu_mem_mb(vllm, "eval_model") == 0
    with pytest.raises(ValueError, match="not a GPU rule"):
        gm.rule_job(box, "render_tables")


def test_an_allocator_budget_leaves_the_process_overhead_out():
    assert gm.allocator_budget_bytes(4096) == (4096 - gm.PROCESS_OVERHEAD_MB) * MIB
    assert gm.allocator_budget_bytes(100) == 0
    assert torch.tensor(0).numel() == 1


# One evaluation job's process on an H100 (benchmarks/bench_gpu_generation.py --eval-job
# --phases, docs/scale.md): MiB outside the allocator at each phase, and the process's whole
# memory at its peak, with the allocator at its cap
MEASURED_OUTSIDE = {"cuda context": 615, "model loaded": 615, "first prefill": 761,
                    "steady decode": 771, "end": 781}  # fmt: skip


@pytest.mark.parametrize(("phase", "outside_mib"), sorted(MEASURED_OUTSIDE.items()))
def test_the_process_overhead_covers_what_lies_outside_the_allocator(phase, outside_mib):
    """The declared overhead holds every measured phase's memory outside the allocator, so a
    process whose allocator is at its cap is still inside its declaration."""
    assert outside_mib <= gm.PROCESS_OVERHEAD_MB
    for job in (gm.GpuJob(128, 2048, 64, "fast"), gm.GpuJob(8, 2048, 64, "fast", 4, 8)):
        declared = gm.job_mb(LARGE, job)
        budget_mib = gm.allocator_budget_bytes(declared) // MIB
        assert budget_mib * MIB >= gm.job_bytes(LARGE, job)
        assert budget_mib + outside_mib <= declared


# The GPU-box study on an H100 (dev/gpu_box.sh study, docs/scale.md): each rule's most MiB
# outside the allocator at a job's exit, with the jobs sharing the card
MEASURED_STUDY_OUTSIDE = {"base_model": 746, "training_pool": 762, "control_replay": 756,
                          "train_segment": 846, "eval_model": 766}  # fmt: skip


@pytest.mark.parametrize(("rule", "outside_mib"), sorted(MEASURED_STUDY_OUTSIDE.items()))
def test_the_process_overhead_covers_every_study_job_outside_its_allocator(rule, outside_mib):
    """Jobs that share a card load no more outside their allocators than the declared overhead."""
    assert outside_mib <= gm.PROCESS_OVERHEAD_MB


@pytest.mark.parametrize(
    ("declared", "budget"), [(4352, 3328), (8704, 7680), (32256, 31232), (1024, 0), (500, 0)]
)
def test_a_declaration_is_its_allocator_budget_and_the_process_overhead(declared, budget):
    assert gm.allocator_budget_bytes(declared) == budget * MIB
