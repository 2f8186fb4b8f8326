"""The code block of provenance: a dirty tree is named by the SHA256 of its uncommitted diff and
of its untracked files, so a result built from uncommitted code can be traced to that code."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from editcredit.io.code_identity import DIFF_OPTIONS, code_identity, git_tree_state
from editcredit.io.provenance import code_version

C = "c" * 40
SHA = hashlib.sha256


def _untracked_digest(pairs):
    return SHA("".join(f"{p}\0{h}\n" for p, h in sorted(pairs)).encode()).hexdigest()


@pytest.mark.parametrize(
    ("diff", "untracked", "dirty", "diff_sha", "untracked_sha", "n"),
    [
        (b"", [], False, None, None, 0),  # clean
        (b"diff --git a/x b/x\n", [], True, SHA(b"diff --git a/x b/x\n").hexdigest(), None, 0),
        (b"", [("new.py", "1" * 64)], True, None, _untracked_digest([("new.py", "1" * 64)]), 1),
        (
            b"d",
            [("b.py", "2" * 64), ("a.py", "1" * 64)],  # in path order, whatever the listing
            True,
            SHA(b"d").hexdigest(),
            _untracked_digest([("a.py", "1" * 64), ("b.py", "2" * 64)]),
            2,
        ),
    ],
)
def test_code_identity(diff, untracked, dirty, diff_sha, untracked_sha, n):
    block = code_identity("1.0", C, diff, untracked)
    assert block == {
        "package_version": "1.0",
        "git_commit": C,
        "git_dirty": dirty,
        "git_diff_sha256": diff_sha,
        "git_untracked_sha256": untracked_sha,
        "git_untracked_files": n,
    }


def test_code_outside_a_checkout_is_unknown():
    block = code_identity("1.0", "", None, None)
    assert block["git_commit"] == "unknown" and block["git_dirty"] is None
    assert block["git_diff_sha256"] is None and block["git_untracked_sha256"] is None


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ((b"x", [("p", "1" * 64)]), (b"x", [("p", "1" * 64)]), True),
        ((b"x", []), (b"y", []), False),  # another change to tracked code
        ((b"", [("p", "1" * 64)]), (b"", [("p", "2" * 64)]), False),  # another untracked file
        ((b"", [("p", "1" * 64)]), (b"", [("q", "1" * 64)]), False),  # the same bytes elsewhere
    ],
)
def test_different_code_gets_a_different_identity(a, b, same):
    assert (code_identity("1", C, *a) == code_identity("1", C, *b)) is same


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return out.stdout


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    (repo / ".gitignore").write_text("results/\n")
    (repo / "src/mod.py").write_text("x = 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    return repo


def test_a_clean_checkout(repo):
    block = code_version(repo / "src")
    assert block["git_commit"] == _git(repo, "rev-parse", "HEAD").strip()
    assert block["git_dirty"] is False and block["git_diff_sha256"] is None


def test_a_changed_tracked_file_is_named_by_its_diff(repo):
    (repo / "src/mod.py").write_text("x = 2\n")
    block = code_version(repo / "src")
    diff = subprocess.run(
        ["git", "diff", "HEAD", *DIFF_OPTIONS], cwd=repo, check=True, capture_output=True
    ).stdout
    assert block["git_dirty"] is True and block["git_diff_sha256"] == SHA(diff).hexdigest()
    assert block["git_untracked_sha256"] is None and block["git_untracked_files"] == 0
    _git(repo, "add", "src/mod.py")  # staged or not, the same change
    assert code_version(repo / "src") == block


def test_untracked_files_count_and_ignored_ones_do_not(repo):
    (repo / "results").mkdir()
    (repo / "results/out.json").write_text("{}")  # ignored: an output
    assert code_version(repo)["git_dirty"] is False
    (repo / "src/new.py").write_text("y = 3\n")
    block = code_version(repo)
    assert block["git_dirty"] is True and block["git_diff_sha256"] is None
    assert block["git_untracked_files"] == 1
    assert block["git_untracked_sha256"] == _untracked_digest(
        [("src/new.py", SHA(b"y = 3\n").hexdigest())]
    )
    (repo / "src/new.py").write_text("y = 4\n")
    assert code_version(repo)["git_untracked_sha256"] != block["git_untracked_sha256"]


def test_the_same_change_in_two_clones_has_the_same_identity(repo, tmp_path):
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    _git(clone, "config", "diff.noprefix", "true")  # a user's setting changes nothing
    for r in (repo, clone):
        (r / "src/mod.py").write_text("x = 5\n")
        (r / "src/extra.py").write_text("z = 0\n")
    assert code_version(repo) == code_version(clone)


def test_outside_a_checkout(tmp_path):
    assert git_tree_state(tmp_path) is None
    assert code_version(tmp_path)["git_dirty"] is None
