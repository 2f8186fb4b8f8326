"""Multi-bug tasks: planting several bugs, the FAIL_TO_PASS of each bug, the per-bug control's
expectations, the record's rules and its frozen bytes (no sandbox)."""

from __future__ import annotations

import json

import pytest
from taskfactory import make_calc_task

from editcredit.data.freeze import SCHEMA_VERSION, freeze, load_tasks
from editcredit.data.minibugs.pool_files import SeedModule, load_pool
from editcredit.data.mutations import Mutation
from editcredit.data.splits import assign_split
from editcredit.data.task import PlantedBug, Task
from editcredit.grading.controls import bug_control_deviation, bug_control_expectation
from editcredit.sandbox.patches import diff_trees
from editcredit.suites.minibugs import Candidate, candidates
from editcredit.suites.multibugs import (
    MultiCandidate,
    build_multi_task,
    disjoint,
    draw_combinations,
    function_split,
    interaction,
    plant_bugs,
    without_bug,
)

SOURCE = '''"""Three small functions."""


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def neg(a):
    return -a
'''
TESTS = """def test_add():
    from calc3 import add
    assert add(2, 3) == 5


def test_add_zero():
    from calc3 import add
    assert add(0, 4) == 4


def test_mul():
    from calc3 import mul
    assert mul(2, 3) == 6


def test_neg():
    from calc3 import neg
    assert neg(2) == -2


def test_doc():
    import calc3
    assert calc3.__doc__
"""
MODULE = SeedModule("calc3", SOURCE, TESTS)
T = "test_calc3.py::"
ADD = Mutation("binop_swap", "add", 0, 5, 13, 5, 14, "+", "-")
MUL = Mutation("binop_swap", "mul", 0, 9, 13, 9, 14, "*", "//")
NEG = Mutation("drop_unary", "neg", 0, 13, 11, 13, 13, "-a", "a")
MUL_TEXT = Mutation("binop_swap", "mul", 0, 9, 11, 9, 16, "a * b", "a")
F2P = {
    "add": [T + "test_add", T + "test_add_zero"],
    "mul": [T + "test_mul"],
    "neg": [T + "test_neg"],
}
ALL_IDS = {i for ids in F2P.values() for i in ids} | {T + "test_doc"}


@pytest.mark.parametrize(
    "mutations, changed_lines",
    [
        ([ADD, MUL], {5: "    return a - b", 9: "    return a // b"}),
        ([MUL, ADD], {5: "    return a - b", 9: "    return a // b"}),
        ([ADD, MUL, NEG], {5: "    return a - b", 9: "    return a // b", 13: "    return a"}),
        ([NEG, ADD], {5: "    return a - b", 13: "    return a"}),
    ],
)
def test_plant_bugs_changes_exactly_each_bugs_line(mutations, changed_lines):
    planted = plant_bugs(SOURCE, mutations).splitlines()
    original = SOURCE.splitlines()
    assert len(planted) == len(original)
    pairs = enumerate(zip(original, planted, strict=True), start=1)
    diff = {k: new for k, (old, new) in pairs if old != new}
    assert diff == changed_lines


@pytest.mark.parametrize(
    "mutations, error",
    [
        ([ADD, ADD], "two bugs in one function"),
        ([MUL, MUL_TEXT], "two bugs in one function"),
    ],
)
def test_plant_bugs_refuses_two_bugs_of_one_function(mutations, error):
    with pytest.raises(ValueError, match=error):
        plant_bugs(SOURCE, mutations)


@pytest.mark.parametrize("index, kept", [(0, [MUL, NEG]), (1, [ADD, NEG]), (2, [ADD, MUL])])
def test_without_bug_leaves_the_other_bugs_planted(index, kept):
    assert without_bug(SOURCE, [ADD, MUL, NEG], index) == plant_bugs(SOURCE, kept)


@pytest.mark.parametrize(
    "per_bug, expected",
    [
        ([F2P["add"], F2P["mul"]], True),
        ([F2P["add"], F2P["mul"], F2P["neg"]], True),
        ([F2P["add"], [T + "test_add"]], False),
    ],
)
def test_disjoint_fail_to_pass(per_bug, expected):
    assert disjoint(per_bug) is expected


def _statuses(failed):
    return {i: "failed" if i in failed else "passed" for i in ALL_IDS}


@pytest.mark.parametrize(
    "failed, per_bug, reason",
    [
        (F2P["add"] + F2P["mul"], [F2P["add"], F2P["mul"]], ""),
        (F2P["add"], [F2P["add"], F2P["mul"]], "failed 2 tests, the bugs alone 3"),  # masked
        (F2P["add"] + F2P["mul"] + [T + "test_doc"], [F2P["add"], F2P["mul"]], "failed 4 tests"),
    ],
)
def test_interaction_of_the_all_bugs_run(failed, per_bug, reason):
    found = interaction(_statuses(failed), ALL_IDS, per_bug)
    assert found.startswith(reason) and bool(found) == bool(reason)


def test_interaction_names_a_run_with_other_ids():
    statuses = _statuses(F2P["add"]) | {T + "test_new": "passed"}
    assert interaction(statuses, ALL_IDS, [F2P["add"]]) == "collected other test ids"


def _single(function: str, mutation: Mutation, split: str = "train") -> tuple[Candidate, Task]:
    cand = Candidate(MODULE, function, mutation, plant_bugs(SOURCE, [mutation]), "multibugs")
    f2p = F2P[function]
    task = Task(
        instance_id=cand.instance_id,
        repo="multibugs/calc3",
        problem_statement=f"`{function}` misbehaves",
        patch="gold",
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=sorted(ALL_IDS - set(f2p)),
        statement_test=f2p[0],
        test_paths=["test_calc3.py"],
        files={"calc3.py": cand.mutated_source, "test_calc3.py": TESTS},
        suite="multibugs",
        split=split,
    )
    return cand, task


def _multi_task(bugs=(("add", ADD), ("mul", MUL), ("neg", NEG))) -> Task:
    singles = [_single(f, m) for f, m in bugs]
    combo = MultiCandidate(MODULE, tuple(c for c, _ in singles), tuple(t for _, t in singles))
    return build_multi_task(combo, {"timeout_s": 10, "seed": 1})


def test_build_multi_task_keeps_each_bugs_fail_to_pass_and_gold_hunk():
    task = _multi_task()
    assert [b.function for b in task.bugs] == ["add", "mul", "neg"]
    assert [b.FAIL_TO_PASS for b in task.bugs] == [F2P["add"], F2P["mul"], F2P["neg"]]
    assert task.FAIL_TO_PASS == sorted(i for ids in F2P.values() for i in ids)
    assert task.PASS_TO_PASS == [T + "test_doc"]
    assert task.statement_test == F2P["add"][0]
    assert task.meta["n_bugs"] == 3 and task.split == "train"
    buggy = {"calc3.py": plant_bugs(SOURCE, [ADD, MUL, NEG])}
    assert task.files["calc3.py"] == buggy["calc3.py"]
    assert task.patch == diff_trees(buggy, {"calc3.py": SOURCE})
    fixes = {"add": "    return a + b", "mul": "    return a * b", "neg": "    return -a"}
    for k, bug in enumerate(task.bugs):  # each hunk fixes its bug alone, the others stay
        assert bug.patch == diff_trees(buggy, {"calc3.py": without_bug(SOURCE, [ADD, MUL, NEG], k)})
        added = [ln[1:] for ln in bug.patch.splitlines() if ln.startswith("+ ")]
        assert added == [fixes[bug.function]]
        assert bug.patch.count("\n@@ ") == 1


@pytest.mark.parametrize(
    "index, passed",
    [
        (0, set(F2P["add"])),
        (1, set(F2P["mul"])),
        (2, set(F2P["neg"])),
    ],
)
def test_bug_control_expectation(index, passed):
    task = _multi_task()
    expected = bug_control_expectation(task, index)
    assert set(expected) == set(task.FAIL_TO_PASS) | set(task.PASS_TO_PASS)
    assert {i for i, s in expected.items() if s == "passed"} == passed | {T + "test_doc"}
    assert bug_control_deviation(task, index, expected) is None


@pytest.mark.parametrize(
    "index, statuses, deviation",
    [
        (0, _statuses(F2P["mul"] + F2P["neg"]), None),
        (0, _statuses(F2P["mul"] + F2P["neg"]) | {T + "test_add": "error"}, "bug 0 (add): 1 "),
        (1, _statuses(F2P["add"]), "bug 1 (mul): 1 tests"),  # fixes neg's test too
        (2, _statuses(F2P["add"] + F2P["mul"] + [T + "test_doc"]), "bug 2 (neg): 1 tests"),
        (1, {}, "bug 1 (mul): 2 tests"),  # nothing observed: the expected passes are missing
    ],
)
def test_bug_control_deviation(index, statuses, deviation):
    found = bug_control_deviation(_multi_task(), index, statuses)
    assert found == deviation if deviation is None else found.startswith(deviation)


def test_bug_control_expectation_needs_a_multi_bug_task():
    with pytest.raises(ValueError, match="not a multi-bug task"):
        bug_control_expectation(make_calc_task(), 0)


def test_draw_combinations_stay_in_one_module_and_split_and_are_seeded():
    singles = [
        _single("add", ADD),
        _single("mul", MUL),
        _single("neg", NEG),
        _single("mul", MUL_TEXT, split="holdout"),
    ]
    combos, overlapping = draw_combinations(singles, seed=3)
    again, _ = draw_combinations(singles, seed=3)
    assert [c.instance_id for c in combos] == [c.instance_id for c in again]
    assert overlapping == 0 and combos
    assert len({c.instance_id for c in combos}) == len(combos)
    for combo in combos:
        assert {t.split for t in combo.singles} == {"train"}  # holdout's one function: none
        functions = [c.function for c in combo.bugs]
        assert len(set(functions)) == len(functions) in (2, 3)
        assert functions == [f for f in ("add", "mul", "neg") if f in functions]


def test_draw_combinations_drops_overlapping_fail_to_pass():
    cand, task = _single("mul", MUL)
    shared = task.model_copy(update={"FAIL_TO_PASS": F2P["add"]})
    combos, overlapping = draw_combinations([_single("add", ADD), (cand, shared)], seed=1)
    assert combos == [] and overlapping == 1


@pytest.mark.parametrize(
    "update, error",
    [
        ({"bugs": []}, "2 or more bugs"),
        ({"function": "add"}, "two bugs in one function"),
        ({"FAIL_TO_PASS": F2P["add"]}, "belongs to two bugs"),
        ({"FAIL_TO_PASS": [T + "test_doc"]}, "not the task's FAIL_TO_PASS"),
    ],
)
def test_the_bugs_record_is_checked(update, error):
    data = _multi_task().model_dump()
    if "bugs" in update:
        data["bugs"] = update["bugs"]
    else:
        data["bugs"][1].update(update)
    with pytest.raises(ValueError, match=error):
        Task.model_validate(data)


def test_a_single_bug_task_has_no_bugs_field_in_its_dump_or_identity():
    task = make_calc_task()
    assert task.bugs is None
    assert "bugs" not in task.model_dump() and '"bugs"' not in task.canonical_json()
    assert Task.model_validate(task.model_dump()) == task


def test_a_suite_with_multi_bug_tasks_freezes_and_reads_back(tmp_path):
    tasks = [make_calc_task(), _multi_task()]
    digest = freeze(tasks, tmp_path / "a", "mix", {}, None)
    assert freeze(tasks, tmp_path / "b", "mix", {}, None) == digest
    back = load_tasks(tmp_path / "a" / "tasks.parquet")
    assert sorted(back, key=lambda t: t.instance_id) == sorted(tasks, key=lambda t: t.instance_id)
    assert all(isinstance(b, PlantedBug) for t in back if t.bugs for b in t.bugs)
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["schema_version"] == 4
    single = freeze([make_calc_task()], tmp_path / "c", "one", {}, None)
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION and single


def test_a_functions_split_is_the_one_it_has_in_minibugs():
    fractions = {"train": 0.6, "dev": 0.1, "holdout": 0.3}
    for module in load_pool():
        for cand in candidates([module], seed=1, per_function=1):
            seed_function = f"{module.name}.{cand.function}"
            assert function_split(seed_function, fractions) == assign_split(
                cand.group_key, fractions
            )
