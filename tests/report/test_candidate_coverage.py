"""The candidate list's coverage (editcredit.agent.candidate_coverage; its table,
editcredit.report.candidates): which tasks' gold fix tries of listed candidates reach, per split
and number of bugs, on hand-made tasks and the frozen suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from editcredit.agent.candidate_coverage import coverage_rows, fix_on_list, suite_coverage
from editcredit.agent.candidates import Candidate, listed_candidates
from editcredit.data.freeze import load_tasks
from editcredit.data.task import PlantedBug, Task
from editcredit.report.candidates import coverage_tex
from editcredit.sandbox.patches import diff_trees

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from taskfactory import REPO, make_calc_task  # noqa: E402


def module(add: str = "return a - b", sub: str = "return a + b") -> str:
    """The two-function module with the given return lines (by default: both bugs planted)."""
    return f"def add(a, b):\n    {add}\n\n\ndef sub(a, b):\n    {sub}\n"


PAIR = module()
PAIR_TESTS = "def test_add():\n    pass\n\n\ndef test_sub():\n    pass\n"


def calc(split: str = "train", fixed: str = "") -> Task:
    """The toy calc task; ``fixed``: another gold text of its add line (off the list)."""
    task = make_calc_task().model_copy(update={"split": split})
    if not fixed:
        return task
    files = dict(task.files or {})
    gold = {**files, "calc.py": files["calc.py"].replace("return a - b", fixed)}
    return task.model_copy(update={"patch": diff_trees(files, gold)})


def pair(split: str = "holdout", sub_fix: str = "return a - b") -> Task:
    """Two bugs in two functions of one module: add's - for +, sub's + for -."""
    files = {"m.py": PAIR, "test_m.py": PAIR_TESTS}
    bugs = [
        PlantedBug(
            function="m.add",
            FAIL_TO_PASS=["test_m.py::test_add"],
            patch=diff_trees(files, {**files, "m.py": module(add="return a + b")}),
        ),
        PlantedBug(
            function="m.sub",
            FAIL_TO_PASS=["test_m.py::test_sub"],
            patch=diff_trees(files, {**files, "m.py": module(sub=sub_fix)}),
        ),
    ]
    return Task(
        instance_id=f"toy__m__pair__{sub_fix}",
        repo="toy/m",
        problem_statement="add and sub are wrong",
        patch=diff_trees(files, {**files, "m.py": module("return a + b", sub_fix)}),
        FAIL_TO_PASS=["test_m.py::test_add", "test_m.py::test_sub"],
        PASS_TO_PASS=[],
        test_paths=["test_m.py"],
        files=files,
        suite="toy",
        split=split,
        meta={"seed_functions": ["m.add", "m.sub"]},
        bugs=bugs,
    )


@pytest.mark.parametrize(
    "task, scope, on_list",
    [
        (calc(), "file", True),  # a - b -> a + b is candidate 1
        (calc(), "function", True),  # one seed function: the same list
        (calc(fixed="return b + a"), "file", False),  # the gold line is no operator's reversal
        (pair(), "function", True),  # one candidate per bug, the tries accumulate
        (pair(), "file", False),  # no single seed function: no list
        (pair(sub_fix="return -(b - a)"), "function", False),  # sub's fix is off the list
    ],
)
def test_fix_on_list_by_the_environments_own_list(task, scope, on_list):
    assert fix_on_list(task, listed_candidates(task, scope), scope) is on_list


def test_one_candidate_is_not_enough_when_it_fixes_only_one_of_two_bugs():
    task = pair()
    (add_fix,) = [c for c in listed_candidates(task, "function") if c.new == "    return a + b"]
    assert add_fix.function == "add"
    assert not fix_on_list(task, [add_fix], "function")


def test_a_file_try_replaces_the_earlier_one_so_two_fixes_are_not_reached():
    """Under scope 'file' each try starts from the task's tree: a list holding both bugs'
    fixes still reaches only one of them at a time."""
    task = pair()
    located = listed_candidates(task, "function")
    fixes = [c for c in located if c.new in ("    return a + b", "    return a - b")]
    assert len(fixes) == 2
    bare = [Candidate(k, c.kind, c.path, c.line, c.old, c.new) for k, c in enumerate(fixes, 1)]
    assert not fix_on_list(task, bare, "file")


def test_an_image_task_has_no_fix_on_a_list():
    task = calc().model_copy(update={"files": None, "image": "x:1"})
    assert not fix_on_list(task, [], "file")


def test_rows_per_split_and_bugs_then_the_total():
    tasks = [
        calc("holdout"),
        calc("train"),
        calc("train", fixed="return b + a"),
        pair("train"),
        pair("train", sub_fix="return -(b - a)"),
    ]
    rows = coverage_rows("toy", tasks, "function", listed_candidates)
    got = [
        (r.split, r.bugs, r.tasks, r.covered, r.share, r.median_length, r.max_length) for r in rows
    ]
    assert got == [
        ("train", 1, 2, 1, 0.5, 2.0, 2),
        ("train", 2, 2, 1, 0.5, 3.0, 3),
        ("holdout", 1, 1, 1, 1.0, 2.0, 2),
        ("all", 0, 5, 3, 0.6, 2.0, 3),
    ]


def test_the_list_function_is_the_one_given():
    calls = []

    def nothing(task, scope):
        calls.append((task.instance_id, scope))
        return []

    rows = coverage_rows("toy", [calc()], "file", nothing)
    assert calls == [("toy__calc__add", "file")]
    assert [(r.covered, r.median_length, r.max_length) for r in rows] == [(0, 0.0, 0)] * 2


def test_the_record_and_its_table():
    record = suite_coverage({"toy": [calc(), pair()]}, "function", listed_candidates)
    assert record["try_scope"] == "function"
    assert [r["split"] for r in record["suites"]["toy"]] == ["train", "holdout", "all"]
    tex = coverage_tex(record)
    assert r"\label{tab:candidates}" in tex and "function" in tex
    assert r"toy & train & 1 & 1 & 1 (100.0\%) & 2 & 2 \\" in tex
    assert r"toy & all & all & 2 & 2 (100.0\%) & 2.5 & 3 \\" in tex
    two = coverage_tex(suite_coverage({"a": [calc()], "b": [calc()]}, "file", listed_candidates))
    assert two.count(r"\midrule") == 2  # below the header, and between the suites


def _default_suite_tasks(tmp_path: Path) -> list[Task]:
    """The default suite's frozen tasks: the checkout's where a pipeline froze them, else frozen
    here as rule freeze_suite does (a fresh clone has none), to the same pin."""
    from taskfactory import CONFIG

    from editcredit.suites.build import build_suite

    frozen = Path(REPO) / "data" / "frozen" / "minibugs"
    if not (frozen / "tasks.parquet").exists():
        suite = CONFIG["suites"]["minibugs"]
        digest = build_suite("minibugs", suite, CONFIG["sandbox"], tmp_path)
        assert digest == suite["manifest_sha256"]
        frozen = tmp_path
    return load_tasks(frozen / "tasks.parquet")


def test_the_frozen_default_suite(docker_ready, tmp_path):
    """The default suite under the default scope: about 60 % of each split's tasks have their
    fix on the list (the rest cannot be solved by tries)."""
    tasks = _default_suite_tasks(tmp_path)
    rows = coverage_rows("minibugs", tasks, "file", listed_candidates)
    got = [(r.split, r.bugs, r.tasks, r.covered, r.median_length, r.max_length) for r in rows]
    assert got == [
        ("train", 1, 148, 88, 18.0, 77),
        ("dev", 1, 19, 14, 14.0, 23),
        ("holdout", 1, 98, 56, 19.0, 77),
        ("all", 0, 265, 158, 18.0, 77),
    ]
    assert coverage_rows("minibugs", tasks, "function", listed_candidates) == rows
