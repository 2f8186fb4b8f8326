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


def test_git_binary_sections_split_and_apply(tmp_path):
    import subprocess

    from editcredit.sandbox.patches import git_binary_section, git_blob_id, split_patch

    (tmp_path / "old.bin").write_bytes(b"\x00old")
    patch = git_binary_section("new.bin", None, ("100755", bytes(range(256))))
    patch += git_binary_section("old.bin", ("100644", git_blob_id(b"\x00old")), None)
    sections = split_patch(patch)
    assert [(s.old_path, s.new_path) for s in sections] == [(None, "new.bin"), ("old.bin", None)]
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "new.bin").read_bytes() == bytes(range(256))
    assert not (tmp_path / "old.bin").exists() and (tmp_path / "new.bin").stat().st_mode & 0o100
