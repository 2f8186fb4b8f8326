"""Parsers of the projects' own runners' reports, and the comparison (pure, table-driven)."""

from __future__ import annotations

import pytest

from editcredit.conformance.compare import (
    ProjectResult,
    comparable_id,
    expected_lists,
    flips,
    judge_project,
    mismatches,
)
from editcredit.conformance.reference import (
    ReferenceError_,
    django_statuses,
    junit_nodeid,
    junit_statuses,
    sympy_statuses,
)
from editcredit.conformance.report import report_json, text_table

FILES = ["tests/test_a.py", "src/pkg/mod.py"]


@pytest.mark.parametrize(
    "classname,name,file,expected",
    [
        ("tests.test_a", "test_x", "tests/test_a.py", "tests/test_a.py::test_x"),
        (
            "tests.test_a.TestC",
            "test_y[a/b::c]",
            "tests/test_a.py",
            "tests/test_a.py::TestC::test_y[a/b::c]",
        ),
        (
            "tests.test_a.TestC.TestD",
            "test_z",
            "tests/test_a.py",
            "tests/test_a.py::TestC::TestD::test_z",
        ),
        # inherited from another module: the collecting module wins over the defining file
        ("tests.test_a.TestC", "test_base", "tests/base.py", "tests/test_a.py::TestC::test_base"),
        ("src.pkg.mod", "pkg.mod.func", "src/pkg/mod.py", "src/pkg/mod.py::pkg.mod.func"),
    ],
)
def test_junit_nodeid(classname, name, file, expected):
    assert junit_nodeid(classname, name, file, FILES) == expected


def test_junit_nodeid_without_a_matching_file_is_an_error():
    with pytest.raises(ReferenceError_, match="no test file matches"):
        junit_nodeid("other.mod", "test_x", "", FILES)


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_pass" file="tests/test_a.py" line="1"/>
<testcase classname="tests.test_a" name="test_fail" file="tests/test_a.py" line="2">
  <failure message="assert 1 == 2">...</failure></testcase>
<testcase classname="tests.test_a" name="test_err" file="tests/test_a.py" line="3">
  <error message="failed on setup with">...</error></testcase>
<testcase classname="tests.test_a" name="test_skip" file="tests/test_a.py" line="4">
  <skipped type="pytest.skip" message="no">...</skipped></testcase>
<testcase classname="tests.test_a" name="test_xfail" file="tests/test_a.py" line="5">
  <skipped type="pytest.xfail" message="known"/></testcase>
<testcase classname="tests.test_a" name="test_xpass_strict" file="tests/test_a.py" line="6">
  <failure message="[XPASS(strict)] known">...</failure></testcase>
<testcase classname="tests.test_a" name="test_xpass" file="tests/test_a.py" line="7"/>
<testcase classname="tests.test_a" name="test_fail_then_teardown" file="tests/test_a.py" line="8">
  <failure message="x">...</failure><error message="failed on teardown">...</error></testcase>
</testsuite></testsuites>"""


def test_junit_statuses_cover_every_outcome():
    summary = "PASSED tests/test_a.py::test_pass\nXPASS tests/test_a.py::test_xpass - known\n"
    got = junit_statuses(JUNIT, FILES, summary)
    assert got == {
        "tests/test_a.py::test_pass": "passed",
        "tests/test_a.py::test_fail": "failed",
        "tests/test_a.py::test_err": "error",
        "tests/test_a.py::test_skip": "skipped",
        "tests/test_a.py::test_xfail": "xfail",
        "tests/test_a.py::test_xpass_strict": "xpass",
        "tests/test_a.py::test_xpass": "xpass",
        "tests/test_a.py::test_fail_then_teardown": "failed",
    }


def test_broken_junit_is_an_error():
    with pytest.raises(ReferenceError_, match="JUnit XML"):
        junit_statuses("<testsuites>", FILES)


DJANGO = """\
test_ok (basic.tests.ModelTests.test_ok) ... ok
test_fail (basic.tests.ModelTests.test_fail) ... FAIL
test_err (basic.tests.ModelTests) ... ERROR
test_skip (basic.tests.ModelTests.test_skip) ... skipped 'no db'
test_doc (basic.tests.ModelTests.test_doc)
The first docstring line. ... ok
test_xf (basic.tests.ModelTests.test_xf) ... expected failure
test_xp (basic.tests.ModelTests.test_xp) ... unexpected success
test_sub (basic.tests.SubTests.test_sub) ... ok
  test_sub (basic.tests.SubTests.test_sub) [<object>] (i=2) ... FAIL
test_sub (basic.tests.SubTests.test_sub) (i=3) ... ERROR
test_only_sub_fails (basic.tests.SubTests.test_only_sub_fails) ...
  test_only_sub_fails (basic.tests.SubTests.test_only_sub_fails) (i=1) ... FAIL
System check identified no issues (0 silenced).
"""


def test_django_statuses():
    assert django_statuses(DJANGO) == {
        "basic.tests.ModelTests.test_ok": "passed",
        "basic.tests.ModelTests.test_fail": "failed",
        "basic.tests.ModelTests.test_err": "error",
        "basic.tests.ModelTests.test_skip": "skipped",
        "basic.tests.ModelTests.test_doc": "passed",
        "basic.tests.ModelTests.test_xf": "xfail",
        "basic.tests.ModelTests.test_xp": "xpass",
        "basic.tests.SubTests.test_sub": "failed",
        "basic.tests.SubTests.test_sub [<object>] (i=2)": "failed",
        "basic.tests.SubTests.test_sub (i=3)": "error",
        "basic.tests.SubTests.test_only_sub_fails": "failed",
        "basic.tests.SubTests.test_only_sub_fails (i=1)": "failed",
    }


@pytest.mark.parametrize(
    "runner,test_id,expected",
    [
        ("pytest", "t.py::C::test_x[a (b)]", "t.py::C::test_x[a (b)]"),
        ("django", "test_x (m.C)", "m.C.test_x"),
        ("django", "test_x (m.C.test_x)", "m.C.test_x"),
        ("django", "m.C.test_x", "m.C.test_x"),
        ("django", "test_x (m.C) (value='a b')", "m.C.test_x (value='a b')"),
        ("django", "test_x (m.C.test_x) (value='a b')", "m.C.test_x (value='a b')"),
    ],
)
def test_comparable_id(runner, test_id, expected):
    assert comparable_id(runner, test_id) == expected


def test_mismatches_flips_and_expected_lists():
    clean = {"a": "passed", "b": "passed", "c": "skipped"}
    bug = {"a": "failed", "b": "passed", "c": "skipped"}
    assert flips(clean, bug) == ["a"]
    assert expected_lists(clean, bug) == (["a"], ["b"])
    found = mismatches("clean", clean, {"a": "passed", "b": "error", "d": "passed"})
    assert [(m.test, m.reference, m.grader) for m in found] == [
        ("b", "passed", "error"),
        ("c", "skipped", "absent"),
        ("d", "absent", "passed"),
    ]


def test_a_django_subtest_that_passed_is_absent_from_the_reference():
    ref = {"m.C.test_x": "failed", "m.C.test_x (i=2)": "failed"}
    got = {"m.C.test_x": "failed", "m.C.test_x (i=1)": "passed", "m.C.test_x (i=2)": "failed"}
    assert mismatches("bug", ref, got, "django") == []
    assert mismatches("bug", ref, got, "pytest") != []  # only unittest's output omits them
    got["m.C.test_x (i=1)"] = "failed"  # a failing subtest the reference does not list
    assert [m.test for m in mismatches("bug", ref, got, "django")] == ["m.C.test_x (i=1)"]


def _judged(grader_bug: dict[str, str], verdicts) -> ProjectResult:
    clean = {"a": "passed", "b": "passed"}
    ref = {"clean": clean, "gold": clean, "bug": {"a": "failed", "b": "passed"}}
    got = {"clean": clean, "gold": clean, "bug": grader_bug}
    return judge_project(ProjectResult("p", "1", "pytest"), ref, got, verdicts)


GOOD = {
    "clean": ("valid_1", False, ""),
    "gold": ("valid_1", False, ""),
    "bug": ("valid_0", False, ""),
}


def test_a_conforming_project_is_ok():
    result = _judged({"a": "failed", "b": "passed"}, GOOD)
    assert result.ok and result.matches == 6 and result.mismatches == 0
    assert (result.flips_reference, result.flips_grader) == (1, 1)


@pytest.mark.parametrize(
    "grader_bug,verdicts",
    [
        ({"a": "failed", "b": "failed"}, GOOD),  # a status differs (and the flips)
        ({"a": "failed", "b": "passed"}, {**GOOD, "gold": ("unresolved", True, "tampering")}),
        ({"a": "failed", "b": "passed"}, {**GOOD, "bug": ("valid_1", False, "")}),
        ({"a": "failed", "b": "passed"}, {**GOOD, "clean": ("unresolved", False, "missing")}),
    ],
)
def test_any_difference_fails_the_project(grader_bug, verdicts):
    result = _judged(grader_bug, verdicts)
    assert not result.ok
    table = text_table([result])
    assert "NO" in table and "0/1 projects conform" in table
    assert '"conforming": 0' in report_json([result])


SYMPY_OLD = """\
============================= test process starts ==============================
executable:         /usr/bin/python3  (3.11.2-final-0) [CPython]
sympy/utilities/tests/test_iterables.py[4]
test_is_palindromic ok
test_rotate F
test_known_bug f
test_slow_one Slow w                                                          [FAIL]

sympy/core/tests/test_singleton.py[2]
test_Singleton ok
test_names E                                                                  [FAIL]

________________________________________________________________________________
"""

SYMPY_PYTEST = """\
sympy/utilities/tests/test_iterables.py::test_rotate FAILED               [ 50%]
sympy/utilities/tests/test_iterables.py::test_ok PASSED                   [ 75%]
sympy/core/tests/test_singleton.py::test_skip SKIPPED (no numpy)          [100%]
"""


def test_sympy_statuses_of_both_runners():
    assert sympy_statuses(SYMPY_OLD) == {
        "sympy/utilities/tests/test_iterables.py::test_is_palindromic": "passed",
        "sympy/utilities/tests/test_iterables.py::test_rotate": "failed",
        "sympy/utilities/tests/test_iterables.py::test_known_bug": "xfail",
        "sympy/utilities/tests/test_iterables.py::test_slow_one": "skipped",
        "sympy/core/tests/test_singleton.py::test_Singleton": "passed",
        "sympy/core/tests/test_singleton.py::test_names": "error",
    }
    assert sympy_statuses(SYMPY_PYTEST) == {
        "sympy/utilities/tests/test_iterables.py::test_rotate": "failed",
        "sympy/utilities/tests/test_iterables.py::test_ok": "passed",
        "sympy/core/tests/test_singleton.py::test_skip": "skipped",
    }


def test_a_rerun_replaces_its_projects_in_the_saved_report(tmp_path):
    from editcredit.conformance.report import load_results, merge_results

    old = [ProjectResult("a", "1", "pytest", tests=3), ProjectResult("b", "1", "django")]
    path = tmp_path / "conformance.json"
    path.write_text(report_json(old))
    earlier = load_results(path)
    assert [(r.project, r.tests) for r in earlier] == [("a", 3), ("b", 0)]
    new = [ProjectResult("b", "2", "django", tests=9, ok=True)]
    merged = merge_results(earlier, new, ["b", "a", "gone"])
    assert [(r.project, r.version, r.tests) for r in merged] == [("b", "2", 9), ("a", "1", 3)]
    assert merge_results(earlier, new, ["a"]) == [earlier[0]]
    assert load_results(tmp_path / "absent.json") == []
