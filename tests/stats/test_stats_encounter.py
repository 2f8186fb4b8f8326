"""Training-side encounter analysis: k-th minus first encounter, bootstrap CI over tasks."""

from __future__ import annotations

import json

import pytest

from editcredit.stats import encounter_differences, encounter_effect, mean_ci
from editcredit.stats.encounter import last_encounter_differences, most_influential

ROWS = {
    "tasks": ["a", "a", "a", "b", "b", "c"],
    "encounters": [1, 2, 3, 2, 1, 1],
    "pass_rates": [0.25, 0.5, 0.75, 0.5, 0.5, 0.0],
}


@pytest.mark.parametrize(
    ("k", "tasks", "diffs", "n_without"),
    [(2, ("a", "b"), (0.25, 0.0), 1), (3, ("a",), (0.5,), 2), (4, (), (), 3)],
)
def test_encounter_differences_hand_cases(k, tasks, diffs, n_without):
    got = encounter_differences(ROWS["tasks"], ROWS["encounters"], ROWS["pass_rates"], k=k)
    assert got == (tasks, diffs, n_without)


@pytest.mark.parametrize(
    ("min_encounters", "tasks", "diffs", "n_without"),
    [(2, ("a", "b"), (0.5, 0.0), 1), (3, ("a",), (0.5,), 2), (4, (), (), 3)],
)
def test_last_encounter_differences_hand_cases(min_encounters, tasks, diffs, n_without):
    got = last_encounter_differences(
        ROWS["tasks"], ROWS["encounters"], ROWS["pass_rates"], min_encounters=min_encounters
    )
    assert got == (tasks, diffs, n_without)


def test_last_encounter_is_the_latest_one_seen():
    # d seen at encounters 1, 2, 5 (encounter numbers need not be contiguous)
    got = last_encounter_differences(["d"] * 3, [1, 2, 5], [0.0, 1.0, 0.25])
    assert got == (("d",), (0.25,), 0)


@pytest.mark.parametrize(
    ("diffs", "expected"),
    [
        ([0.0, 0.1, 0.9], ("c", 2)),  # farthest from the mean 1/3
        ([0.5, -0.5], ("a", 0)),  # a tie: the first
        ([-1.0, 0.0, 0.0, 0.0], ("a", 0)),
        ([0.3], None),  # nothing to leave out of one task
        ([], None),
    ],
)
def test_most_influential_task(diffs, expected):
    assert most_influential(["a", "b", "c", "d"][: len(diffs)], diffs) == expected


def test_last_encounter_needs_two_encounters_at_least():
    with pytest.raises(ValueError, match="min_encounters must be >= 2"):
        last_encounter_differences(["a"], [1], [0.5], min_encounters=1)


def test_encounter_effect_uses_1d_bootstrap():
    out = encounter_effect(**ROWS, k=2, n_resamples=500, rng_seed=3, level=0.95)
    assert out.ci == mean_ci([0.25, 0.0], n_resamples=500, rng_seed=3, level=0.95)
    assert out.mean_difference == 0.125 and out.n_tasks_without_kth == 1
    json.dumps(out.to_dict())
    empty = encounter_effect(**ROWS, k=4, n_resamples=500, rng_seed=3, level=0.95)
    assert empty.ci is None and empty.mean_difference is None


@pytest.mark.parametrize(
    ("tasks", "encounters", "rates", "k", "match"),
    [
        (["a"], [0], [0.5], 2, "encounter must be"),
        (["a"], [1], [1.5], 2, r"not in \[0, 1\]"),
        (["a"], [1], [float("nan")], 2, r"not in \[0, 1\]"),
        (["a", "a"], [1, 1], [0.5, 0.5], 2, "duplicate"),
        (["a"], [1, 2], [0.5], 2, "differ in length"),
        (["a"], [1], [0.5], 1, "k must be >= 2"),
    ],
)
def test_encounter_bad_rows(tasks, encounters, rates, k, match):
    with pytest.raises(ValueError, match=match):
        encounter_differences(tasks, encounters, rates, k=k)
