"""The known truth of an edit block from the task's record (data/block_truth.py), on real tasks
of the frozen suites: a multi-bug task of 2 and one of 3 bugs of multibugs, single-bug tasks of
multibugs and minibugs (their records, copied into block_truth_tasks.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from taskfactory import make_calc_task

from editcredit.data.block_truth import (
    FIXED,
    PLANTED,
    BlockTruth,
    apply_patch,
    block_truth,
    has_planted_truth,
    observed_mutants,
    planted_bugs,
)
from editcredit.data.task import Task
from editcredit.sandbox.patches import diff_trees

TASKS = {
    t["instance_id"]: Task.model_validate(t)
    for t in json.loads((Path(__file__).with_name("block_truth_tasks.json")).read_text())
}
TWO = TASKS["multibugs__calendar_math__2bugs__44b1f6da"]  # format_duration, quarter_of
THREE = TASKS["multibugs__calendar_math__3bugs__1bf4b9ae"]  # days_in_month, minutes_until, q..
DURATION = TASKS["multibugs__calendar_math__format_duration__2941927f"]  # TWO's bug 0 alone
LEAP = TASKS["multibugs__calendar_math__is_leap_year__82f11e7b"]  # a mutant of another function
CLAMP = TASKS["minibugs__arithmetic_kit__clamp__6a7dd87c"]
MUTANTS = observed_mutants(TASKS.values())

CAL, KIT = "calendar_math.py", "arithmetic_kit.py"
FIX_DURATION = ("if 0 > hours:", "if hours > 0:")
FIX_QUARTER = ("month > 11:", "month > 12:")
LEAP_RULE = "year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"
FIX_DAYS = ("        pass\n", f"        leap = {LEAP_RULE}\n")
LEAP_BUG = ("    if year % 100 == 0:\n", "    if not (year % 100 == 0):\n")
LEAP_TESTS = tuple(sorted(LEAP.FAIL_TO_PASS))


def edited(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def two(*edits: tuple[str, str]) -> str:
    return edited(TWO.files[CAL], *edits)


def test_the_fixtures_are_the_frozen_records():
    assert [b.function for b in TWO.bugs] == ["format_duration", "quarter_of"]
    assert [b.function for b in THREE.bugs] == ["days_in_month", "minutes_until", "quarter_of"]
    assert TWO.bugs[0].meta["single_instance_id"] == DURATION.instance_id
    assert set(LEAP_TESTS) <= set(TWO.PASS_TO_PASS)
    assert CLAMP.bugs is None and CLAMP.meta["seed_function"] == "arithmetic_kit.clamp"


@pytest.mark.parametrize(
    "task, names",
    [
        (TWO, [("format_duration",), ("quarter_of",)]),
        (THREE, [("days_in_month",), ("minutes_until",), ("quarter_of",)]),
        (DURATION, [("format_duration",)]),
        (CLAMP, [("clamp",)]),
    ],
    ids=["2bugs", "3bugs", "single-multibugs", "single-minibugs"],
)
def test_planted_bugs_place_each_bug_in_its_function(task, names):
    sites = planted_bugs(task)
    assert [s.names for s in sites] == names
    assert [s.index for s in sites] == list(range(len(names)))
    bugs = task.bugs or [task]
    assert [list(s.fail_to_pass) for s in sites] == [b.FAIL_TO_PASS for b in bugs]
    path = sites[0].path
    assert all(s.state(task.files[path]) == PLANTED for s in sites)
    gold = apply_patch(task.files, task.patch)
    assert all(s.state(gold[path]) == FIXED for s in sites)


def test_a_bugs_own_hunk_fixes_it_alone():
    for k, bug in enumerate(THREE.bugs):
        tree = apply_patch(THREE.files, bug.patch)
        states = [s.state(tree[CAL]) for s in planted_bugs(THREE)]
        assert states == [FIXED if j == k else PLANTED for j in range(3)]


def test_planted_truth_needs_an_inline_tree_and_a_placeable_gold_hunk():
    assert all(has_planted_truth(t) for t in TASKS.values())
    assert has_planted_truth(make_calc_task())
    image = CLAMP.model_copy(update={"files": None, "image": "some/image"})
    assert not has_planted_truth(image)
    with pytest.raises(ValueError, match="no inline tree"):
        planted_bugs(image)
    two_files = make_calc_task().model_copy(
        update={"patch": make_calc_task().patch + make_calc_task().patch.replace("calc", "x")}
    )
    assert not has_planted_truth(two_files)


def test_observed_mutants_are_the_single_bug_tasks():
    assert [m.instance_id for m in MUTANTS] == [
        DURATION.instance_id,
        LEAP.instance_id,
        CLAMP.instance_id,
    ]
    leap = MUTANTS[1]
    assert leap.names == ("is_leap_year",) and leap.fails == LEAP_TESTS


FIXED_TWO = two(FIX_DURATION)

ROWS = [
    # (task, before, after, mutants, expected)
    pytest.param(TWO, TWO.files[CAL], two(FIX_DURATION), (), BlockTruth("fix", (0,)), id="fix-0"),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(("month > 11:", "month   >   12:  # the last month")),
        (),
        BlockTruth("fix", (1,)),
        id="fix-1-other-layout",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(FIX_DURATION, FIX_QUARTER),
        (),
        BlockTruth("fix", (0, 1)),
        id="fix-both",
    ),
    pytest.param(
        TWO, FIXED_TWO, two(FIX_DURATION, FIX_QUARTER), (), BlockTruth("fix", (1,)), id="fix-rest"
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(("if 0 > hours:", "if 0 < hours:")),
        (),
        BlockTruth("other"),
        id="equivalent-fix-is-not-the-gold-code",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(("return (month - 1) // 3 + 1", "return (month + 2) // 3")),
        (),
        BlockTruth("other"),
        id="another-line-of-a-bug-function",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(('    """Tell whether', '    # a comment\n    """Tell whether')),
        (),
        BlockTruth("other"),
        id="a-comment",
    ),
    pytest.param(
        TWO,
        FIXED_TWO,
        TWO.files[CAL],
        (),
        BlockTruth("harmful", (), (0,), tuple(sorted(TWO.bugs[0].FAIL_TO_PASS))),
        id="replants-a-fixed-bug",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(LEAP_BUG),
        MUTANTS,
        BlockTruth("harmful", (), (), LEAP_TESTS),
        id="writes-an-observed-mutant",
    ),
    pytest.param(
        TWO, TWO.files[CAL], two(LEAP_BUG), (), BlockTruth("other"), id="mutant-not-given"
    ),
    pytest.param(
        TWO,
        two(LEAP_BUG),
        two(LEAP_BUG, FIX_DURATION),
        MUTANTS,
        BlockTruth("fix", (0,)),
        id="the-mutant-was-there-before",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(LEAP_BUG, FIX_DURATION),
        MUTANTS,
        BlockTruth("fix", (0,), (), LEAP_TESTS),
        id="fix-and-mutant",
    ),
    pytest.param(
        TWO,
        TWO.files[CAL],
        two(("if 0 > hours:", "if 0 > hours")),
        (),
        BlockTruth("other"),
        id="does-not-parse",
    ),
    pytest.param(TWO, TWO.files[CAL], None, (), BlockTruth("other"), id="deleted"),
    pytest.param(
        THREE,
        THREE.files[CAL],
        edited(THREE.files[CAL], FIX_DAYS),
        (),
        BlockTruth("fix", (0,)),
        id="3bugs-fix-0",
    ),
    pytest.param(
        THREE,
        THREE.files[CAL],
        edited(THREE.files[CAL], FIX_QUARTER),
        (),
        BlockTruth("fix", (2,)),
        id="3bugs-fix-2",
    ),
    pytest.param(
        THREE,
        THREE.files[CAL],
        edited(THREE.files[CAL], LEAP_BUG),
        MUTANTS,
        BlockTruth("harmful", (), (), LEAP_TESTS),
        id="3bugs-mutant",
    ),
    pytest.param(
        DURATION,
        DURATION.files[CAL],
        edited(DURATION.files[CAL], FIX_DURATION),
        MUTANTS,
        BlockTruth("fix", (0,)),
        id="single-multibugs-fix",
    ),
    pytest.param(
        DURATION,
        apply_patch(DURATION.files, DURATION.patch)[CAL],
        DURATION.files[CAL],
        MUTANTS,
        BlockTruth("harmful", (), (0,), tuple(sorted(DURATION.FAIL_TO_PASS))),
        id="single-multibugs-replant",
    ),
    pytest.param(
        CLAMP,
        CLAMP.files[KIT],
        edited(CLAMP.files[KIT], ("if not (value > high):", "if value > high:")),
        MUTANTS,
        BlockTruth("fix", (0,)),
        id="single-minibugs-fix",
    ),
    pytest.param(
        CLAMP,
        CLAMP.files[KIT],
        edited(CLAMP.files[KIT], ("if not (value > high):", "if value >= high:")),
        MUTANTS,
        BlockTruth("other"),
        id="single-minibugs-another-edit",
    ),
]


@pytest.mark.parametrize("task, before, after, mutants, expected", ROWS)
def test_block_truth(task, before, after, mutants, expected):
    path = planted_bugs(task)[0].path
    assert block_truth(task, {path: before}, {path: after}, mutants) == expected


def test_a_block_of_other_files_is_other():
    assert block_truth(TWO, {"notes.txt": None}, {"notes.txt": "x\n"}, MUTANTS) == BlockTruth(
        "other"
    )


def test_before_and_after_name_the_same_paths():
    with pytest.raises(ValueError, match="other paths"):
        block_truth(TWO, {CAL: TWO.files[CAL]}, {}, ())


def test_a_label_is_one_of_three():
    with pytest.raises(ValueError, match="unknown block label"):
        BlockTruth("good")


def test_apply_patch_refuses_a_hunk_that_does_not_match():
    with pytest.raises(ValueError, match="does not match"):
        apply_patch({CAL: FIXED_TWO}, TWO.bugs[0].patch)


@pytest.mark.parametrize(
    "patch, error",
    [
        ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n", "no 'diff --git' header"),
        (diff_trees({}, {"x.py": "a\n"}), "adds or deletes"),
        (diff_trees({"x.py": "a\n"}, {}), "adds or deletes"),
        (diff_trees({"y.py": "a\n"}, {"y.py": "b\n"}), "which the tree lacks"),
    ],
)
def test_apply_patch_takes_changed_files_only(patch, error):
    with pytest.raises(ValueError, match=error):
        apply_patch({"x.py": "a\n"}, patch)
