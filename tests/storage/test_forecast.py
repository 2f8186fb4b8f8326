"""The plan's storage forecast: the arithmetic (table-driven), the parameter count of a Qwen2
architecture against the real model, the error of a plan that does not fit."""

from __future__ import annotations

import pytest

from editcredit.storage.forecast import (
    BYTES_PER_TOKEN,
    PlanCounts,
    StorageForecastError,
    checkpoint_bytes,
    forecast,
    qwen2_parameters,
    require_fit,
)

GB = 10**9


def counts(**kw) -> PlanCounts:
    base = dict(
        parameters=1000,
        segments=4,
        pruned=0,
        runs=1,
        rollouts=0,
        eval_slots=0,
        context_tokens=100,
    )
    return PlanCounts(**{**base, **kw})


@pytest.mark.parametrize(
    "plan, free, margin, peak, results, fits",
    [
        # four segments of 12 kB each (1000 parameters x (4 + 8) bytes), nothing pruned
        (counts(), 10**6, 0, 4 * 12_000, 0, True),
        # retention: 2 kept, plus one in flight per run (min(pruned, runs))
        (counts(pruned=2), 10**6, 0, (2 + 1) * 12_000, 0, True),
        (counts(segments=6, pruned=4, runs=2), 10**6, 0, (2 + 2) * 12_000, 0, True),
        # results: (rollouts + eval slots) x context tokens x BYTES_PER_TOKEN
        (
            counts(segments=0, rollouts=10, eval_slots=5),
            10**6,
            0,
            0,
            15 * 100 * BYTES_PER_TOKEN,
            True,
        ),
        # the margin counts: 48 kB needed, 50 kB free, 2 kB kept free fits exactly
        (counts(), 50_000, 2_000, 48_000, 0, True),
        (counts(), 50_000, 2_001, 48_000, 0, False),
        # unknown parameters: no checkpoint bytes, results still counted
        (counts(parameters=None, rollouts=1), 10**6, 0, 0, 100 * BYTES_PER_TOKEN, True),
        # nothing left to write fits whatever is free, unless the margin already eats it
        (counts(segments=0), 5, 5, 0, 0, True),
        (counts(segments=0), 4, 5, 0, 0, False),
    ],
)
def test_forecast_arithmetic(plan, free, margin, peak, results, fits):
    got = forecast(plan, free, margin)
    assert got.peak_checkpoint_bytes == peak
    assert got.result_bytes == results
    assert got.need_bytes == peak + results
    assert got.fits is fits
    assert ("fits" if fits else "DOES NOT FIT") in got.line().split(": ")[-1]


def test_more_pruned_than_segments_is_refused():
    with pytest.raises(ValueError, match="3 pruned of 2 segments"):
        forecast(counts(segments=2, pruned=3), GB, 0)


@pytest.mark.parametrize(
    "sizes",
    [
        dict(vocab=50, hidden=16, intermediate=32, layers=1, heads=2, kv_heads=1),
        dict(vocab=2048, hidden=128, intermediate=512, layers=2, heads=4, kv_heads=2),
        dict(vocab=300, hidden=64, intermediate=96, layers=3, heads=8, kv_heads=8),
    ],
)
def test_qwen2_parameters_match_the_model(sizes):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=sizes["vocab"],
            hidden_size=sizes["hidden"],
            intermediate_size=sizes["intermediate"],
            num_hidden_layers=sizes["layers"],
            num_attention_heads=sizes["heads"],
            num_key_value_heads=sizes["kv_heads"],
            tie_word_embeddings=True,
        )
    )
    assert qwen2_parameters(**sizes) == sum(p.numel() for p in model.parameters())


def test_checkpoint_bytes_are_weights_and_two_adam_moments():
    assert checkpoint_bytes(10) == 120


def test_a_plan_that_does_not_fit_names_the_shortfall_and_the_setting():
    got = forecast(counts(parameters=GB // 12), 3 * GB, GB)  # 4 GB needed, 2 GB usable
    with pytest.raises(StorageForecastError, match="2.000 GB short") as err:
        require_fit(got, "storage forecast")
    assert "training.health.min_free_disk_gb" in str(err.value)
    require_fit(forecast(counts(), GB, 0), "storage forecast")  # fits: no error


def test_a_suite_that_is_not_frozen_or_not_readable_counts_no_slots(tmp_path):
    from editcredit.storage.plan import split_counts

    assert split_counts(tmp_path / "missing.parquet") is None
    placeholder = tmp_path / "tasks.parquet"
    placeholder.write_text("x\n")  # a frozen placeholder: no Parquet footer
    assert split_counts(placeholder) is None
