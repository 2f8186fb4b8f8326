"""The base-recipe benchmark's pure parts: variant parsing, and which settings share a corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_base_variants import configured, corpus_key, parse_variant  # noqa: E402


@pytest.mark.parametrize(
    "text, expected",
    [
        ("default", ("default", [])),
        (
            "obs0 models.tiny.sft.observation_loss_weight=0.0",
            ("obs0", ["models.tiny.sft.observation_loss_weight=0.0"]),
        ),
        ("w a.b=1 c.d=x", ("w", ["a.b=1", "c.d=x"])),
    ],
)
def test_a_variant_is_a_name_and_its_overrides(text, expected):
    assert parse_variant(text) == expected


def test_an_override_without_a_value_is_refused_naming_it():
    with pytest.raises(SystemExit, match="--variant v: 'models.tiny.seed' is not KEY=VALUE"):
        parse_variant("v models.tiny.seed")


@pytest.mark.parametrize(
    "override, shares",
    [
        ("models.tiny.sft.max_steps=4000", True),
        ("models.tiny.architecture.num_layers=4", True),
        ("models.tiny.tokenizer_vocab=1024", True),
        ("models.tiny.experts.rename_prob=1.0", True),
        ("models.tiny.experts.rename_locals=true", True),
        ("models.tiny.experts.kind=oracle", False),
        ("models.tiny.experts.episodes_per_task=3", False),
        ("models.tiny.seed=7", False),
        ("agent.max_turns=10", False),
        ("sandbox.backend=local", False),
    ],
)
def test_only_settings_the_experts_play_by_get_a_new_corpus(override, shares):
    base = corpus_key(configured([]), "a" * 64)
    assert (corpus_key(configured([override]), "a" * 64) == base) is shares


def test_another_suite_gets_another_corpus():
    config = configured([])
    assert corpus_key(config, "a" * 64) != corpus_key(config, "b" * 64)
