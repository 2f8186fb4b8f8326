"""The base model is a function of config and data only (METHOD §11): SFT runs a fixed number
of steps, its schedule depends on the step alone, and two builds give the same bytes, one of
them beside a CPU burner."""

from __future__ import annotations

import hashlib
import multiprocessing
import time
from pathlib import Path

import pytest
import torch
from policyfactory import SFT_DEFAULTS

from editcredit.policy.base_training import fit_base_model
from editcredit.policy.sft import SFTConfig, lr_factor

ARCH = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_layers": 1,
    "num_heads": 2,
    "num_kv_heads": 1,
    "max_positions": 256,
}
CORPUS = [
    (
        [
            f"`f{k}` fails: expected {k}, got {k + 1}\n\nm.py:\ndef f{k}(a):\n    return a + 1",
            "m.py edited",
        ],
        [f"edit m.py\n- a + 1\n+ a + {k % 3}", "submit"],
    )
    for k in range(12)
]
CFG = {
    "seed": 3,
    "tokenizer_vocab": 300,
    "tokenizer_whole_numbers_below": 0,
    "architecture": ARCH,
    "experts": {"rename_prob": 0.0, "rename_locals": True, "rename_copies": 0},
    "sft": {
        **SFT_DEFAULTS,
        "lr": 0.01,
        "batch_size": 4,
        "max_steps": 40,
        "warmup_steps": 4,
        "observation_loss_weight": 0.3,
    },
}


@pytest.mark.parametrize(
    ("step", "expected"),
    [(0, 0.25), (3, 1.0), (4, 1.0), (10, 0.1 + 0.9 * 0.5), (16, 0.1), (99, 0.1)],
)
def test_lr_factor_is_a_function_of_the_step(step, expected):
    assert lr_factor(step, warmup_steps=4, max_steps=16) == pytest.approx(expected)


def test_no_wall_clock_budget_is_accepted():
    with pytest.raises(TypeError, match="max_seconds"):
        SFTConfig(max_steps=10, max_seconds=5.0)


def _burn(stop) -> None:
    x = 0
    while not stop.is_set():
        x = (x * 31 + 7) % 1_000_003


def _build(out: Path, cfg: dict = CFG) -> tuple[str, int]:
    stats = fit_base_model(CORPUS, [[] for _ in CORPUS], cfg, out, torch.device("cpu"), 12)
    digest = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    return digest, stats["sft"]["steps"]


@pytest.mark.parametrize("ema_decay", [None, 0.9], ids=["last-weights", "averaged"])
def test_two_builds_give_identical_bytes_one_beside_a_cpu_burner(tmp_path, ema_decay):
    cfg = CFG if ema_decay is None else {**CFG, "sft": {**CFG["sft"], "ema_decay": ema_decay}}
    quiet, steps = _build(tmp_path / "quiet", cfg)
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,)) for _ in range(2)]
    for p in burners:
        p.start()
    try:
        time.sleep(0.2)
        loaded, steps_loaded = _build(tmp_path / "loaded", cfg)
    finally:
        stop.set()
        for p in burners:
            p.join()
    assert steps == steps_loaded == CFG["sft"]["max_steps"]
    assert quiet == loaded
    for name in ("tokenizer.json", "config.json"):
        assert (tmp_path / "quiet" / name).read_bytes() == (tmp_path / "loaded" / name).read_bytes()


def test_identity_receipt_holds_no_wall_clock_figures(tmp_path):
    _build(tmp_path / "a")
    _build(tmp_path / "b")
    assert (tmp_path / "a" / "identity.json").read_text().count("seconds") == 0


def test_weight_average_follows_the_decay_of_each_step():
    from editcredit.policy.sft import WeightAverage

    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    average = WeightAverage(model, decay=0.5)
    for value, expected in [(4.0, 2.0), (4.0, 3.0), (0.0, 1.5)]:
        with torch.no_grad():
            model.weight.fill_(value)
        average.update(model)
        assert average.shadow[0].item() == pytest.approx(expected)
    average.copy_to(model)
    assert model.weight.item() == pytest.approx(1.5)


def test_weight_averaging_changes_the_model_and_zero_keeps_the_last_weights(tmp_path):
    def digest(cfg, name):
        fit_base_model(CORPUS, [[]] * len(CORPUS), cfg, tmp_path / name, torch.device("cpu"), 1)
        return hashlib.sha256((tmp_path / name / "model.safetensors").read_bytes()).hexdigest()

    plain = digest(CFG, "plain")
    zero = digest({**CFG, "sft": {**CFG["sft"], "ema_decay": 0.0}}, "zero")
    averaged = digest({**CFG, "sft": {**CFG["sft"], "ema_decay": 0.9}}, "averaged")
    assert zero == plain
    assert averaged != plain


def test_a_decay_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="ema_decay"):
        fit_base_model(
            CORPUS,
            [[]] * len(CORPUS),
            {**CFG, "sft": {**CFG["sft"], "ema_decay": 1.0}},
            Path("/nonexistent/never-written"),
            torch.device("cpu"),
            1,
        )
