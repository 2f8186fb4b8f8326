"""Shared test data for training: toy train-split tasks and a small policy trained on them."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import yaml
from taskfactory import CONFIG, make_calc_task

from editcredit.data.task import Task

#: config ``models.<name>.sft`` as the schema fills an empty one: each key's default.
SCHEMA = yaml.safe_load((Path(__file__).parents[1] / "config" / "schema.yaml").read_text())
SFT_SCHEMA = SCHEMA["properties"]["models"]["additionalProperties"]["properties"]["sft"]
SFT_DEFAULTS = {key: sub["default"] for key, sub in SFT_SCHEMA["properties"].items()}


def sft_config(seed: int = 0, **values):
    """The SFT settings of the schema's defaults with ``values`` over them (editcredit.policy.sft
    has none of its own)."""
    from editcredit.policy.sft import SFTConfig
    from editcredit.settings import Sft

    return SFTConfig.from_settings(Sft.from_mapping({**SFT_DEFAULTS, **values}), seed)


TOY_ARCH = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_layers": 1,
    "num_heads": 2,
    "num_kv_heads": 1,
    "max_positions": 512,
}


def tiny_qwen2(seed: int = 0, **overrides):
    """A randomly initialised, very small Qwen2 causal LM (tied embeddings), for unit tests."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    sizes = dict(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(Qwen2Config(**{**sizes, **overrides}))


def toy_tasks(n: int = 3) -> list[Task]:
    """``n`` copies of the calc task with distinct ids, in the train split."""
    base = make_calc_task()
    return [
        base.model_copy(update={"instance_id": f"toy__calc__add_{i}", "split": "train"})
        for i in range(n)
    ]


def write_toy_jsonl(path: Path, n: int = 3) -> Path:
    """The toy tasks as a SWE-bench-format JSONL file (inline trees)."""
    rows = [t.model_dump(mode="json") for t in toy_tasks(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def train_toy_policy(
    out: Path, sandbox, give_up: float = 0.0, sft_steps: int = 600, agent: dict | None = None
) -> Path:
    """A small HF policy trained by SFT on scripted experts for the toy tasks (seconds on CPU).

    It edits, runs and submits often enough that GRPO groups have unequal rewards. With
    ``give_up`` > 0 that share of the expert episodes (seeded) is replaced by one that submits
    at once, without an edit: the policy then fixes the bug only some of the time, a task family
    where RL has a certain way up (edit first). ``agent``: the experts' environment settings
    (the default's unless given; the jobs that play the policy should use the same)."""
    import random

    from editcredit.agent.expert_corpus import expert_corpus, expert_environment
    from editcredit.policy.base_training import fit_base_model

    cfg = {
        "seed": 0,
        "tokenizer_vocab": 400,
        "tokenizer_whole_numbers_below": 0,
        "architecture": TOY_ARCH,
        "experts": {
            "kind": "oracle",
            "episodes_per_task": 4,
            "detour_prob": 0.8,
            "run_prob": 0.5,
            "rename_prob": 0.0,
            "rename_locals": True,
            "fragment_style": "minimal",
            "rename_copies": 0,
        },
        "sft": {
            **SFT_DEFAULTS,
            "lr": 0.01,
            "batch_size": 8,
            "max_steps": sft_steps,
            "warmup_steps": 5,
            "observation_loss_weight": 0.3,
        },
    }
    tasks = toy_tasks()
    experts = {**cfg["experts"], "seed": cfg["seed"]}
    make_env = expert_environment({**(agent or CONFIG["agent"]), "max_turns": 4}, CONFIG["sandbox"])
    corpus, names = expert_corpus(tasks, sandbox, experts, make_env, 4, 1)
    rng = random.Random(f"give-up:{give_up}")
    corpus = [
        ((obs[:1], ["submit"]) if rng.random() < give_up else (obs, acts)) for obs, acts in corpus
    ]
    fit_base_model(corpus, names, cfg, out, torch.device("cpu"), len(tasks))
    return out


def update_sequences(masks, vocab: int = 50, seed: int = 0, logprob_scale: float = 1.0):
    """Random ``UpdateSequence``s, one per generated-token mask, in two alternating groups."""
    import numpy as np

    from editcredit.rl.update import UpdateSequence

    rng = np.random.default_rng(seed)
    out = []
    for i, mask in enumerate(masks):
        n = len(mask)
        out.append(
            UpdateSequence(
                token_ids=rng.integers(0, vocab, n).tolist(),
                logprobs=(-rng.random(n) * logprob_scale).tolist(),
                valid=np.asarray(mask, dtype=bool),
                advantages=np.where(mask, rng.normal(size=n), 0.0),
                group=f"g{i % 2}",
            )
        )
    return out


#: the turn policies of the generation tests: ids below 2 are pad and a stop, and a quarter of
#: the vocabulary ends a turn, so rows stop after different numbers of tokens
TURN_VOCAB = 64
TURN_PAD = 0
TURN_STOPS = tuple(range(1, TURN_VOCAB, 4))


def turn_policy(seed: int, num_heads: int = 2, num_kv_heads: int = 1):
    """A random policy of the project's own architecture (``policy.model``) over TURN_VOCAB ids."""
    from editcredit.policy.model import new_model, tiny_config

    arch = {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_layers": 2,
        "num_heads": num_heads,
        "num_kv_heads": num_kv_heads,
        "max_positions": 256,
    }
    return new_model(tiny_config(TURN_VOCAB, arch, TURN_PAD, None, TURN_STOPS[0]), seed).eval()


def turn_prompts(lengths, offset: int = 0, stride: int = 7) -> list[list[int]]:
    """Deterministic prompts of the given lengths over the ids that are neither pad nor stop."""
    span = TURN_VOCAB - 2
    return [[2 + (stride * k + 3 * n + offset) % span for k in range(n)] for n in lengths]


def next_turn(prompts, outputs, observations) -> list[list[int]]:
    """Each prompt extended by its sampled reply and an observation, as the rollout loop does."""
    return [p + o.token_ids + obs for p, o, obs in zip(prompts, outputs, observations, strict=True)]


def assert_same_samples(a, b) -> None:
    """Two generations sampled the same ids, ended the same way, with the same log-probs."""
    import pytest

    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    assert [o.finished for o in a] == [o.finished for o in b]
    for x, y in zip(a, b, strict=True):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)
