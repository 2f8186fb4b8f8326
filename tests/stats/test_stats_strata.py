"""Comparisons by number of bugs: the comparisons the plan gives (the control T - O only where
training.controls plans T), the strata of the tasks, and the record's differences, CIs, W/L/T
and minimum detectable differences on hand-computed cases; an empty stratum and an absent
comparison are reported absent, not zero."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.stats.arms import ArmScores
from editcredit.stats.bootstrap import seed_task_ci, task_ci
from editcredit.stats.loaders import read_bug_counts
from editcredit.stats.power import bootstrap_se, z_multiplier
from editcredit.stats.strata import StrataSpec, strata_record, strata_specs, stratify_tasks

PLAN = {"O": [42, 7], "B": [42, 7], "M": [42, 7], "E": [42]}
BOOT = {"n_resamples": 2000, "rng_seed": 20260927, "level": 0.95}


@pytest.mark.parametrize(
    ("plan", "controls", "expected"),
    [
        (
            PLAN,
            None,
            [
                StrataSpec("M", "B", (42, 7), False),
                StrataSpec("M", "O", (42, 7), False),
                StrataSpec("T", "O", (), True, "training.controls plans no T"),
            ],
        ),
        (
            PLAN,
            {"T": [7, 42]},
            [
                StrataSpec("M", "B", (42, 7), False),
                StrataSpec("M", "O", (42, 7), False),
                StrataSpec("T", "O", (7, 42), True),
            ],
        ),
        (
            {"M": [42, 7], "B": [42], "E": [42]},
            {"T": [9]},
            [
                StrataSpec("M", "B", (42,), False),
                StrataSpec("M", "O", (), False, "training.plan trains no O"),
                StrataSpec("T", "O", (), True, "training.controls plans no O"),
            ],
        ),
        (
            {"M": [1], "B": [2], "O": [1]},
            {"T": [3]},
            [
                StrataSpec("M", "B", (), False, "M and B share no training seed"),
                StrataSpec("M", "O", (1,), False),
                StrataSpec("T", "O", (), True, "T and O share no training seed"),
            ],
        ),
    ],
    ids=["default", "truth-control", "no-O", "no-shared-seed"],
)
def test_the_comparisons_the_plan_gives(plan, controls, expected):
    assert strata_specs(plan, controls) == expected


def test_only_the_control_is_flagged_a_control():
    specs = strata_specs(PLAN, {"T": [42, 7]})
    assert [(s.label, s.control) for s in specs] == [
        ("M - B", False),
        ("M - O", False),
        ("T - O", True),
    ]
    assert [StrataSpec.from_dict(s.to_dict()) for s in specs] == specs


@pytest.mark.parametrize(
    ("counts", "single", "multi"),
    [
        ({"a": 1, "b": 2, "c": 3, "d": 1}, ("a", "d"), ("b", "c")),
        ({"a": 1, "b": 1, "c": 1, "d": 1}, ("a", "b", "c", "d"), ()),
        ({"a": 2, "b": 2, "c": 4, "d": 3}, (), ("a", "b", "c", "d")),
    ],
)
def test_strata_split_the_tasks_by_their_bugs(counts, single, multi):
    assert stratify_tasks(["a", "b", "c", "d"], counts) == {"single": single, "multi": multi}


@pytest.mark.parametrize(
    ("counts", "message"),
    [({"a": 1}, r"no task record for 1 task\(s\), e.g. \['b'\]"), ({"a": 1, "b": 0}, "b has 0")],
)
def test_a_task_without_a_count_or_bug_is_an_error(counts, message):
    with pytest.raises(ValueError, match=message):
        stratify_tasks(["a", "b"], counts)


TASKS = ("s1", "s2", "s3", "m1", "m2")
BUGS = {"s1": 1, "s2": 1, "s3": 1, "m1": 2, "m2": 3}
# seeds 42 and 7 (rows) x TASKS (columns), in multiples of 1/4 (samples of n = 4)
ARM_M = [[1.0, 0.5, 0.75, 0.5, 0.25], [0.75, 0.5, 1.0, 0.25, 0.25]]
ARM_B = [[0.5, 0.5, 0.25, 0.25, 0.25], [0.5, 0.75, 0.5, 0.25, 0.0]]
ARM_O = [[0.75, 0.5, 0.5, 0.5, 0.25], [0.5, 0.5, 0.75, 0.25, 0.25]]


def arm(name: str, values) -> ArmScores:
    v = np.array(values)
    return ArmScores(name, (42, 7), TASKS, v, v)


def record(specs, scores=None, bugs=BUGS):
    scores = scores or {"M": arm("M", ARM_M), "B": arm("B", ARM_B), "O": arm("O", ARM_O)}
    return strata_record(specs, scores, TASKS, bugs, evalset="holdout", **BOOT)


def parts(entry) -> dict:
    return {p["stratum"]: p for p in entry["strata"]}


# hand-computed: D = M - B, per stratum, mean over seeds and the stratum's tasks
#   seed 42: s 0.5, 0, 0.5 | m 0.25, 0      seed 7: s 0.25, -0.25, 0.5 | m 0, 0.25
# M - O:   seed 42: s 0.25, 0, 0.25 | m 0, 0  seed 7: s 0.25, 0, 0.25 | m 0, 0
@pytest.mark.parametrize(
    ("index", "stratum", "n_tasks", "difference", "wlt"),
    [
        (0, "all", 5, 2.0 / 10, (4, 1, 0)),
        (0, "single", 3, 1.5 / 6, (2, 1, 0)),
        (0, "multi", 2, 0.5 / 4, (2, 0, 0)),
        (1, "all", 5, 1.0 / 10, (2, 0, 3)),
        (1, "single", 3, 1.0 / 6, (2, 0, 1)),
        (1, "multi", 2, 0.0, (0, 0, 2)),
    ],
)
def test_differences_and_wins_by_stratum(index, stratum, n_tasks, difference, wlt):
    rec = record(strata_specs(PLAN, None))
    part = parts(rec["comparisons"][index])[stratum]
    assert part["present"] and part["n_tasks"] == n_tasks and part["absent"] == ""
    comp = part["comparison"]
    assert comp["difference"] == pytest.approx(difference, abs=1e-12)
    sign = comp["sign"]
    assert (sign["wins"], sign["losses"], sign["ties"]) == wlt


def test_both_cis_and_the_mdd_are_those_of_the_stratums_difference_matrix():
    rec = record(strata_specs(PLAN, None))
    multi = parts(rec["comparisons"][0])["multi"]["comparison"]
    d = np.array(ARM_M)[:, 3:] - np.array(ARM_B)[:, 3:]
    assert multi["ci_seed_task"] == seed_task_ci(d, **BOOT).to_dict()
    assert multi["ci_task"] == task_ci(d, **BOOT).to_dict()
    se = bootstrap_se(d, n_resamples=BOOT["n_resamples"], rng_seed=BOOT["rng_seed"])
    assert multi["se"] == se.se > 0 and multi["se_scheme"] == "seed x task"
    assert multi["mdd"] == pytest.approx(z_multiplier(0.05, 0.80) * se.se, rel=1e-12)
    # M - O on the multi-bug tasks: D is 0 everywhere, so no spread and an MDD of 0
    flat = parts(rec["comparisons"][1])["multi"]["comparison"]
    assert flat["se"] == 0.0 and flat["mdd"] == 0.0
    assert (flat["ci_seed_task"]["lower"], flat["ci_seed_task"]["upper"]) == (0.0, 0.0)


def test_an_empty_stratum_and_an_absent_control_are_absent_not_zero():
    single_bug = {t: 1 for t in TASKS}
    rec = record(strata_specs(PLAN, None), bugs=single_bug)
    assert [s["n_tasks"] for s in rec["strata"]] == [5, 0]
    mb = parts(rec["comparisons"][0])
    assert mb["multi"] == {
        "stratum": "multi",
        "label": "2+ bugs",
        "present": False,
        "n_tasks": 0,
        "absent": "no task with 2+ bugs",
        "comparison": None,
    }
    assert mb["single"]["comparison"] == mb["all"]["comparison"]
    control = rec["comparisons"][2]
    assert control["label"] == "T - O" and control["control"]
    assert control["absent"] == "training.controls plans no T"
    assert all(p["comparison"] is None for p in control["strata"])
    json.dumps(rec)  # JSON-ready


def test_the_truth_control_is_compared_with_o_at_its_seeds():
    t = [[1.0, 1.0, 1.0, 0.75, 0.5], [1.0, 0.75, 1.0, 0.5, 0.5]]
    scores = {"M": arm("M", ARM_M), "B": arm("B", ARM_B), "O": arm("O", ARM_O), "T": arm("T", t)}
    rec = record(strata_specs(PLAN, {"T": [42, 7]}), scores)
    control = rec["comparisons"][2]
    assert control["control"] and control["absent"] == "" and control["seeds"] == [42, 7]
    # T - O: seed 42: s 0.25, 0.5, 0.5 | m 0.25, 0.25   seed 7: s 0.5, 0.25, 0.25 | m 0.25, 0.25
    by = parts(control)
    assert by["single"]["comparison"]["difference"] == pytest.approx(2.25 / 6)
    assert by["multi"]["comparison"]["difference"] == pytest.approx(0.25)
    assert by["multi"]["comparison"]["mdd"] == 0.0


def test_an_unresolved_cell_leaves_bounds_and_no_mdd():
    lower = np.array(ARM_M)
    upper = lower.copy()
    upper[0, 4] = 0.5  # one unresolved slot of M-s42 on m2
    scores = {"M": ArmScores("M", (42, 7), TASKS, lower, upper), "B": arm("B", ARM_B)}
    specs = [StrataSpec("M", "B", (42, 7), False)]
    by = parts(record(specs, scores)["comparisons"][0])
    multi = by["multi"]["comparison"]
    assert not multi["resolved"] and multi["difference"] is None and multi["mdd"] is None
    assert multi["difference_upper"] == pytest.approx(0.5 / 4 + 0.25 / 4)
    assert by["single"]["comparison"]["resolved"]  # the other stratum is decided


def test_a_single_seed_comparison_takes_the_task_bootstrap():
    specs = strata_specs({"M": [42], "B": [42], "O": [42]}, None)
    scores = {
        k: v.subset(seeds=[42]) for k, v in {"M": arm("M", ARM_M), "B": arm("B", ARM_B)}.items()
    }
    scores["O"] = arm("O", ARM_O).subset(seeds=[42])
    comp = parts(record(specs, scores)["comparisons"][0])["all"]["comparison"]
    assert comp["ci_seed_task"] is None and comp["ci_task"] is not None
    assert comp["se_scheme"] == "task (seeds fixed)"


@pytest.mark.parametrize(
    ("bugs", "expected"),
    [(None, {"a": 1, "b": 1}), ([None, json.dumps([{}, {}, {}])], {"a": 1, "b": 3})],
)
def test_bug_counts_from_the_task_records(tmp_path, bugs, expected):
    columns = {"instance_id": ["a", "b"], "split": ["holdout", "holdout"]}
    if bugs is not None:
        columns["bugs"] = bugs
    path = tmp_path / "tasks.parquet"
    pq.write_table(pa.table(columns), path)
    assert read_bug_counts(path) == expected
