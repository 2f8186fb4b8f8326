"""Diff splitting, protected paths and tree diffs (applied for real with git apply)."""

from __future__ import annotations

import pytest

from editcredit.sandbox.patches import (
    PatchFormatError,
    diff_trees,
    is_protected_path,
    partition_patch,
    split_patch,
)
from editcredit.sandbox.workspace import git_apply


@pytest.mark.parametrize(
    "path,protected",
    [
        ("calc.py", False),
        ("test_calc.py", True),
        ("pkg/calc_test.py", True),
        ("tests/helpers.py", True),
        ("conftest.py", True),
        ("a/b/conftest.py", True),
        ("pytest.ini", True),
        ("setup.cfg", True),
        ("pyproject.toml", True),
        ("tox.ini", True),
        ("sitecustomize.py", True),
        ("x.pth", True),
        ("src/contest.py", False),
    ],
)
def test_protected_paths(path, protected):
    assert is_protected_path(path, []) is protected


def test_tree_diff_applies_with_git_and_partition_drops_protected(tmp_path):
    before = {"a.py": "x = 1\n", "gone.py": "bye\n", "test_a.py": "t\n"}
    after = {"a.py": "x = 2\n", "new.py": "hi", "test_a.py": "cheat\n", "conftest.py": "c\n"}
    patch = diff_trees(before, after)
    assert [s.paths for s in split_patch(patch)] == [
        ("a.py",),
        ("conftest.py",),
        ("gone.py",),
        ("new.py",),
        ("test_a.py",),
    ]
    kept, dropped = partition_patch(patch, ["test_a.py"])
    assert dropped == ["conftest.py", "test_a.py"]
    for rel, text in before.items():
        (tmp_path / rel).write_text(text)
    assert git_apply(kept, tmp_path) == ""
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert (tmp_path / "new.py").read_text() == "hi"
    assert not (tmp_path / "gone.py").exists()
    assert (tmp_path / "test_a.py").read_text() == "t\n"


@pytest.mark.parametrize(
    "text",
    ["just prose\n", "--- a\nno plus line\n", "diff --git a/x b/x\n--- a/x\n+++ b/x\nno hunks\n"],
)
def test_not_a_diff(text):
    with pytest.raises(PatchFormatError):
        split_patch(text)
