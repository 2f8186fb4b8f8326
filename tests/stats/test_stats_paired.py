"""Paired comparison A - B: difference, CIs, W/L/T, bounds, single-seed contrasts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from editcredit.stats import ArmScores, compare_arms, score_slots, seed_task_ci, task_ci

BOOT = {"n_resamples": 2000, "rng_seed": 20260927, "level": 0.95}
SEEDS = (42, 314159, 271828)

A_VALUES = np.array([[1.0, 0.5, 0.0], [0.75, 0.5, 0.25]])
B_VALUES = np.array([[0.5, 0.5, 0.25], [0.25, 0.75, 0.0]])
# D = A - B = [[.5, 0, -.25], [.5, -.25, .25]]; per task [.5, -.125, 0]: W1 L1 T1; mean .125


def _arms(a=A_VALUES, b=B_VALUES, seeds=(42, 7), tasks=("t1", "t2", "t3")):
    return (
        ArmScores.from_values("M", a, seeds=seeds, tasks=tasks),
        ArmScores.from_values("B", b, seeds=seeds, tasks=tasks),
    )


def test_hand_case_difference_and_win_loss_tie():
    a, b = _arms()
    out = compare_arms(a, b, **BOOT)
    assert out.label == "M - B" and out.kind == "paired seed x task comparison"
    assert out.resolved and not out.single_seed
    assert out.difference == 0.125
    assert out.difference_lower == out.difference_upper == 0.125
    assert out.task_differences == (0.5, -0.125, 0.0)
    assert (out.sign.wins, out.sign.losses, out.sign.ties) == (1, 1, 1)
    assert out.sign.p_value == 1.0
    d = A_VALUES - B_VALUES
    assert out.ci_seed_task == seed_task_ci(d, **BOOT)
    assert out.ci_task == task_ci(d, **BOOT)
    assert out.primary_ci is out.ci_seed_task


def test_alignment_by_labels():
    a, b = _arms()
    shuffled = b.subset(seeds=[7, 42], tasks=["t3", "t1", "t2"])
    assert compare_arms(a, shuffled, **BOOT) == compare_arms(a, b, **BOOT)


def test_unresolved_slots_give_bounds_only():
    a, b = _arms()
    a_lo = A_VALUES.copy()
    a_lo[0, 1] = 0.25  # a task with unresolved slots: its score is in [0.25, 0.5]
    b_hi = B_VALUES.copy()
    b_hi[1, 2] = 0.5
    a = ArmScores("M", a.seeds, a.tasks, lower=a_lo, upper=A_VALUES)
    b = ArmScores("B", b.seeds, b.tasks, lower=B_VALUES, upper=b_hi)
    out = compare_arms(a, b, **BOOT)
    assert not out.resolved
    assert out.difference is None and out.ci_seed_task is None and out.ci_task is None
    assert out.sign is None and out.task_differences is None
    # [A_lo - B_hi, A_hi - B_lo]
    assert out.difference_lower == pytest.approx(a_lo.mean() - b_hi.mean())
    assert out.difference_upper == pytest.approx(A_VALUES.mean() - B_VALUES.mean())
    assert (out.difference_lower, out.difference_upper) == (0.0, 0.125)
    json.dumps(out.to_dict())


def test_single_seed_contrast_is_labelled_and_task_only():
    values_m = np.random.default_rng(1).integers(0, 17, size=(3, 40)) / 16
    values_e = np.random.default_rng(2).integers(0, 17, size=(1, 40)) / 16
    tasks = tuple(f"t{i}" for i in range(40))
    m = ArmScores.from_values("M", values_m, seeds=SEEDS, tasks=tasks)
    e = ArmScores.from_values("E", values_e, seeds=(42,), tasks=tasks)
    with pytest.raises(ValueError, match="not paired"):
        compare_arms(m, e, **BOOT)
    out = compare_arms(m.subset(seeds=[42]), e, label="M42 - E42", **BOOT)
    assert out.single_seed and out.kind == "single-seed contrast"
    assert out.label == "M42 - E42"
    assert out.ci_seed_task is None
    assert out.ci_task is not None and out.primary_ci is out.ci_task
    assert out.difference == pytest.approx((values_m[0] - values_e[0]).mean())


def test_different_task_sets_are_refused():
    a, _ = _arms()
    b = ArmScores.from_values("B", B_VALUES, seeds=(42, 7), tasks=("t1", "t2", "t9"))
    with pytest.raises(ValueError, match=r"only in M: \['t3'\], only in B: \['t9'\]"):
        compare_arms(a, b, **BOOT)


def test_from_eval_scores_and_in_pool_subset():
    def score(values):
        tasks = ["x", "x", "y", "y", "z", "z"]
        return score_slots(tasks, [0, 1] * 3, values, n_samples=2)

    m = ArmScores.from_eval_scores(
        "M", {42: score([1, 1, 1, 0, 0, 0]), 7: score([1, 0, 1, 1, 1, 0])}
    )
    b = ArmScores.from_eval_scores(
        "B", {42: score([1, 0, 0, 0, 0, 0]), 7: score([0, 0, 1, 1, 0, 0])}
    )
    np.testing.assert_array_equal(m.values, [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5]])
    out = compare_arms(m, b, **BOOT)
    assert out.difference == pytest.approx(1 / 3)
    assert out.task_differences == (0.5, 0.25, 0.25)
    assert (out.sign.wins, out.sign.losses, out.sign.ties) == (3, 0, 0)
    in_pool = compare_arms(m.subset(tasks=["x", "z"]), b.subset(tasks=["x", "z"]), **BOOT)
    assert in_pool.tasks == ("x", "z") and in_pool.task_differences == (0.5, 0.25)


def test_unresolved_eval_score_propagates():
    tasks = ["x", "x", "y", "y"]
    m = ArmScores.from_eval_scores(
        "M", {42: score_slots(tasks, [0, 1, 0, 1], [1, None, 0, 0], n_samples=2)}
    )
    b = ArmScores.from_eval_scores(
        "B", {42: score_slots(tasks, [0, 1, 0, 1], [0, 0, 0, 1], n_samples=2)}
    )
    assert not m.resolved
    with pytest.raises(ValueError, match="unresolved"):
        _ = m.values
    out = compare_arms(m, b, **BOOT)
    # A in [0.25, 0.5] (mean of [0.5..1.0, 0]), B = 0.25
    assert (out.difference_lower, out.difference_upper) == (0.0, 0.25)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": (1, 1)}, "duplicate"),
        ({"tasks": ("t1", "t2")}, "shape"),
        ({"a": np.array([[np.nan, 0, 0], [0, 0, 0]])}, "not finite"),
    ],
)
def test_arm_scores_validation(kwargs, match):
    args = {"a": A_VALUES, "seeds": (42, 7), "tasks": ("t1", "t2", "t3")} | kwargs
    with pytest.raises(ValueError, match=match):
        ArmScores.from_values("M", args["a"], seeds=args["seeds"], tasks=args["tasks"])


def test_arm_scores_lower_above_upper_refused():
    with pytest.raises(ValueError, match="lower > upper"):
        ArmScores("M", (1,), ("t",), lower=[[0.5]], upper=[[0.25]])


def test_arm_scores_arrays_are_read_only_copies():
    values = A_VALUES.copy()
    arm = ArmScores.from_values("M", values, seeds=(42, 7), tasks=("t1", "t2", "t3"))
    values[0, 0] = -1.0
    assert arm.lower[0, 0] == 1.0
    with pytest.raises(ValueError):
        arm.lower[0, 0] = 0.0
