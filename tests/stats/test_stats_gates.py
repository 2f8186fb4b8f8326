"""The pre-registered claim gate: pass iff difference >= +4 points AND CI lower bound > 0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from editcredit.stats import ArmScores, claim_gate, compare_arms, gate_verdict

MIN_DIFF = 0.04  # +4 points; in production from config
BOOT = {"n_resamples": 2000, "rng_seed": 20260927, "level": 0.95}

# (difference, ci_lower, resolved, passes, substrings that must appear in the reasons)
ROWS = [
    (0.05, 0.010, True, True, ["difference 0.0500 >= 0.04", "CI lower 0.0100 > 0"]),
    (0.04, 0.001, True, True, ["difference 0.0400 >= 0.04"]),
    (0.3 - 0.26, 0.001, True, True, []),  # 0.03999999999999998: exactly 4 points in float
    (0.039, 0.010, True, False, ["difference 0.0390 < 0.04"]),
    (0.05, 0.0, True, False, ["CI lower 0.0000 <= 0"]),
    (0.05, -0.01, True, False, ["CI lower -0.0100 <= 0"]),
    (0.03, -0.01, True, False, ["difference 0.0300 < 0.04", "CI lower -0.0100 <= 0"]),
    (-0.05, -0.08, True, False, ["difference -0.0500 < 0.04"]),
    (None, None, False, False, ["unresolved slots", "no difference", "no CI"]),
    (0.10, 0.05, False, False, ["unresolved slots"]),
    (0.05, None, True, False, ["no CI"]),
]


@pytest.mark.parametrize(("difference", "ci_lower", "resolved", "passes", "why"), ROWS)
def test_gate_rows(difference, ci_lower, resolved, passes, why):
    v = gate_verdict(
        difference, ci_lower, min_difference=MIN_DIFF, resolved=resolved, label="M - B"
    )
    assert v.passed is passes
    assert v.verdict == ("pass" if passes else "fail")
    text = "; ".join(v.reasons)
    for fragment in why:
        assert fragment in text
    assert str(v).startswith(f"claim gate M - B: {'PASS' if passes else 'FAIL'} (")
    json.dumps(v.to_dict())


def test_gate_threshold_is_a_parameter():
    assert gate_verdict(0.05, 0.01, min_difference=0.06).passed is False
    assert gate_verdict(0.05, 0.01, min_difference=0.04, ci_lower_threshold=0.02).passed is False
    assert gate_verdict(0.0399, 0.01, min_difference=0.04, atol=1e-3).passed is True


def _arms(effect: float, seeds=(42, 314159, 271828), n_tasks=100):
    g = np.random.default_rng(4)
    base = g.integers(0, 17, size=(1, n_tasks)) / 16
    noise = g.normal(0, 0.05, size=(len(seeds), n_tasks))
    tasks = tuple(f"t{i}" for i in range(n_tasks))
    b = ArmScores.from_values("B", np.clip(base + noise, 0, 1), seeds=seeds, tasks=tasks)
    m = ArmScores.from_values("M", np.clip(base + noise + effect, -1, 2), seeds=seeds, tasks=tasks)
    return m, b


def test_claim_gate_on_comparisons():
    m, b = _arms(effect=0.10)
    strong = claim_gate(compare_arms(m, b, **BOOT), min_difference=MIN_DIFF)
    assert strong.passed and strong.ci_scheme == "seed x task"
    m, b = _arms(effect=0.02)
    weak = claim_gate(compare_arms(m, b, **BOOT), min_difference=MIN_DIFF)
    assert not weak.passed and weak.ci_lower > 0  # significant but below +4 points
    assert any("difference" in r and "<" in r for r in weak.reasons)


def test_claim_gate_single_seed_uses_task_ci():
    m, b = _arms(effect=0.10, seeds=(42,))
    v = claim_gate(compare_arms(m, b, label="M42 - E42", **BOOT), min_difference=MIN_DIFF)
    assert v.passed and v.ci_scheme == "task (seeds fixed)" and v.label == "M42 - E42"


def test_claim_gate_cannot_pass_with_unresolved_slots():
    m, b = _arms(effect=0.50)
    upper = m.upper.copy()
    upper[0, 0] = min(upper[0, 0] + 0.0625, 2.0)
    m = ArmScores("M", m.seeds, m.tasks, lower=m.lower, upper=upper)
    comparison = compare_arms(m, b, **BOOT)
    v = claim_gate(comparison, min_difference=MIN_DIFF)
    assert not v.passed and v.verdict == "fail"
    assert v.reasons[0].startswith("unresolved slots")
    assert v.difference is None and v.ci_lower is None
