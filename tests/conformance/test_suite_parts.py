"""The suite's glue without docker: commands, the task handed to the grader, trees and diffs,
the image's site-packages (table-driven where it can be)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from editcredit.conformance.build import Built, edited_copy, unpack_wheel, write_site, write_tree
from editcredit.conformance.compare import expected_lists
from editcredit.conformance.pins import Edit, Project, load_pins
from editcredit.conformance.suite import (
    _diff,
    make_task,
    reference_command,
    reference_statuses,
    select_projects,
    task_id,
)

ROOT = Path(__file__).resolve().parents[2]
PINS = load_pins(ROOT / "conformance" / "projects.yaml")
EDIT = Edit("pkg/m.py", "x = 1", "x = 2")


def _project(runner: str, **over) -> Project:
    base = dict(name="p", kind="local", runner=runner, tests=("tests/a/test_b.py",), gold=EDIT)
    return Project(**{**base, "bug": Edit("pkg/m.py", "x = 1", "x = 3"), **over})


@pytest.mark.parametrize(
    "runner,head,tail",
    [
        ("pytest", ["python3", "-m", "pytest"], ["tests/a/test_b.py"]),
        ("django", ["python3", "./tests/runtests.py"], ["a.test_b"]),
        ("sympy", ["python3", "bin/test", "-C", "--verbose"], ["tests/a/test_b.py"]),
    ],
)
def test_reference_command(runner, head, tail):
    command = reference_command(_project(runner))
    assert command[: len(head)] == head and command[-len(tail) :] == tail
    if runner == "pytest":
        assert "--junitxml=/out/junit.xml" in command and "junit_family=xunit1" in command


def test_reference_statuses_read_the_junit_file(tmp_path):
    (tmp_path / "junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.a.test_b" name="test_x" '
        'file="tests/a/test_b.py"/></testsuite></testsuites>'
    )
    got = reference_statuses(_project("pytest"), tmp_path, "")
    assert got == {"tests/a/test_b.py::test_x": "passed"}


@pytest.mark.parametrize(
    "runner,test,expected",
    [
        ("pytest", "t.py::C::test_x", "t.py::C::test_x"),
        ("django", "basic.tests.ModelTests.test_x", "test_x (basic.tests.ModelTests)"),
        ("sympy", "sympy/a/tests/test_b.py::test_x", "sympy/a/tests/test_b.py::test_x"),
    ],
)
def test_task_ids(runner, test, expected):
    assert task_id(runner, test) == expected


def test_the_task_is_valid_and_the_diffs_apply(tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "m.py").write_text("a = 0\nx = 1\n")
    project = _project("pytest", tests=("tests/test_m.py",))
    f2p, p2p = expected_lists(
        {"tests/test_m.py::test_a": "passed", "tests/test_m.py::test_b": "passed"},
        {"tests/test_m.py::test_a": "failed", "tests/test_m.py::test_b": "passed"},
    )
    built = Built("p", tree, "editcredit-conformance:p-0", "sha256:0", "0", False)
    task = make_task(project, built, _diff(tree, project.gold), f2p, p2p)
    assert task.FAIL_TO_PASS == ["tests/test_m.py::test_a"]
    assert task.PASS_TO_PASS == ["tests/test_m.py::test_b"]
    assert task.image == built.image and task.workdir == "/testbed"
    copy = edited_copy(tree, project.bug, tmp_path / "bug")
    assert (copy / "pkg" / "m.py").read_text() == "a = 0\nx = 3\n"
    assert (tree / "pkg" / "m.py").read_text() == "a = 0\nx = 1\n"  # the original untouched


def test_local_tree_and_site(tmp_path):
    project = PINS.by_name("srcpkg")
    write_tree(project, ROOT, tmp_path / "cache", tmp_path / "repo")
    assert (tmp_path / "repo" / "src" / "srcpkg" / "core.py").is_file()
    write_site(project, tmp_path / "repo", tmp_path / "cache", tmp_path / "site")
    assert (tmp_path / "site" / "__editable__.srcpkg.pth").read_text() == "/testbed/src\n"
    meta = tmp_path / "site" / "srcpkg-0.1.0.dist-info" / "METADATA"
    assert "Name: srcpkg" in meta.read_text()


def test_unpack_wheel_merges_data_dirs_and_drops_scripts(tmp_path):
    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("w/__init__.py", "")
        zf.writestr("w-1.0.data/purelib/extra.py", "")
        zf.writestr("w-1.0.data/scripts/tool", "#!/bin/sh\n")
        zf.writestr("w-1.0.dist-info/entry_points.txt", "[pytest11]\nw = w\n")
    unpack_wheel(wheel, tmp_path / "site")
    names = sorted(str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*"))
    assert names == [
        "extra.py",
        "w",
        "w-1.0.dist-info",
        "w-1.0.dist-info/entry_points.txt",
        "w/__init__.py",
    ]


def test_ci_subset_is_named_and_small():
    names = [p.name for p in select_projects(PINS, None, ci_only=True)]
    assert {"srcpkg", "unitmix", "asyncprop"} <= set(names) and len(names) <= 5
    assert [p.name for p in select_projects(PINS, ["flask"], ci_only=True)] == ["flask"]
