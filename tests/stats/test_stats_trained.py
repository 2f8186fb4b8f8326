"""Trained vs untrained tasks and CI half-widths: table-driven tests of the pure functions."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import half_width, mean_ci, stratified_ci
from editcredit.stats.trained import TaskSplit, part_record, split_tasks

BOOT = {"n_resamples": 2000, "rng_seed": 20260927, "level": 0.95}
TASKS = ("a", "b", "c", "d")


@pytest.mark.parametrize(
    "runs, expected",
    [
        # both runs trained on a and b; c by one only; d by neither
        ([{"a", "b", "c"}, {"a", "b"}], TaskSplit(("a", "b"), ("d",), ("c",))),
        # nothing trained (the holdout set): every task untrained
        ([set(), set()], TaskSplit((), TASKS, ())),
        # one run trained on everything, the other on nothing: all partly trained
        ([set(TASKS), set()], TaskSplit((), (), TASKS)),
        # a single run (e.g. an arm against the base): its tasks are the trained part
        ([{"d", "a"}], TaskSplit(("a", "d"), ("b", "c"), ())),
        # tasks outside the eval set do not enter any part
        ([{"x", "b"}, {"b", "y"}], TaskSplit(("b",), ("a", "c", "d"), ())),
    ],
)
def test_split_tasks(runs, expected):
    assert split_tasks(TASKS, runs) == expected


def test_split_tasks_needs_a_run():
    with pytest.raises(ValueError, match="no compared run"):
        split_tasks(TASKS, [])


@pytest.mark.parametrize(
    "lower, upper, expected",
    [(-0.1, 0.3, 0.2), (0.0, 0.0, 0.0), (0.02, 0.1, 0.04), (-0.5, -0.1, 0.2)],
)
def test_half_width(lower, upper, expected):
    assert half_width(lower, upper) == pytest.approx(expected)


@pytest.mark.parametrize(
    "lower, upper, match",
    [(0.3, 0.1, "lower > upper"), (float("nan"), 0.1, "not finite"), (0.0, float("inf"), "not")],
)
def test_half_width_rejects_bad_intervals(lower, upper, match):
    with pytest.raises(ValueError, match=match):
        half_width(lower, upper)


def test_every_ci_record_states_its_half_width():
    ci = mean_ci([0.0, 0.5, 1.0, 0.25, 0.75], **BOOT)
    d = ci.to_dict()
    assert d["half_width"] == ci.half_width == pytest.approx((ci.upper - ci.lower) / 2)
    assert d["half_width"] > 0


def test_stratified_ci_with_one_stratum_is_the_mean_ci():
    x = [0.0, 0.5, 1.0, -0.5, 0.25]
    one = stratified_ci([x], **BOOT)
    ref = mean_ci(x, **BOOT)
    assert (one.lower, one.upper, one.estimate) == (ref.lower, ref.upper, ref.estimate)
    assert one.scheme == "task within seed (seeds fixed)"


def test_stratified_ci_weights_strata_equally_and_names_a_bad_one():
    ci = stratified_ci([[1.0, 1.0, 1.0, 1.0], [0.0]], **BOOT)
    assert ci.estimate == 0.5 and ci.lower == ci.upper == 0.5  # no spread within strata
    assert ci.n_seeds == 2 and ci.n_units == 5 and ci.half_width == 0.0
    with pytest.raises(ValueError, match="stratum 1"):
        stratified_ci([[1.0], []], **BOOT)


def _arms(lower_a, upper_a=None):
    seeds, tasks = (42, 7), TASKS
    a = ArmScores("M", seeds, tasks, lower_a, lower_a if upper_a is None else upper_a)
    b = ArmScores.from_values("B", np.zeros((2, 4)), seeds=seeds, tasks=tasks)
    return a, b


def test_part_record_averages_within_seed_then_over_seeds():
    a, b = _arms([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 1.0]])
    rec = part_record(a, b, {42: ("a", "b"), 7: ("d",)}, **BOOT, label="M - B (trained)")
    c = rec["comparison"]
    # seed 42: (1 + 0) / 2 = 0.5; seed 7: 1.0 -> 0.75
    assert c["difference"] == pytest.approx(0.75)
    assert rec["n_tasks"] == 3 and rec["n_cells"] == 3
    assert rec["tasks_by_seed"] == {"42": 2, "7": 1}
    assert (c["wins"], c["losses"], c["ties"]) == (2, 0, 1)
    assert c["half_width"] == pytest.approx((c["ci"]["upper"] - c["ci"]["lower"]) / 2)


def test_part_record_empty_and_unresolved():
    a, b = _arms(np.zeros((2, 4)), [[0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    empty = part_record(a, b, {42: (), 7: ()}, **BOOT, label="x")
    assert empty["comparison"] is None and empty["note"] == "no tasks in this part"
    rec = part_record(a, b, {42: ("a", "b"), 7: ("b",)}, **BOOT, label="x")
    c = rec["comparison"]
    assert c["difference"] is None and c["ci"] is None and c["half_width"] is None
    # seed 42: upper (0 + 0.5) / 2 = 0.25, seed 7: 0 -> bounds [0, 0.125]
    assert (c["difference_lower"], c["difference_upper"]) == (0.0, 0.125)
    with pytest.raises(ValueError, match="not paired seeds"):
        part_record(a, b, {99: ("a",)}, **BOOT, label="x")
