"""Grader-chosen sentinel tests carried by every graded run (METHOD §6).

From the run's nonce: a test module with a random name beside the task's first test file,
holding one test that must pass and one that must fail, in a random order. The patch cannot
know their names; a test process whose reporting was forged reports them wrongly. The sandbox
takes their observations out of the run's items, so they never enter any count.

For a unittest-based runner (``unittest``, ``django``) the module holds a ``TestCase`` class of a
random name with the two tests (ids ``name (module.Class)``), for SymPy's runner two plain
functions (ids ``path::name``, as pytest's); the runner's hook runs the module once in the same
process.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass


@dataclass(frozen=True)
class Sentinels:
    """Where the sentinel module lives (relative to the tree) and its two tests."""

    path: str
    must_pass: str
    must_fail: str
    source: str
    runner: str = "pytest"
    klass: str = ""

    def nodeid(self, name: str) -> str:
        if self.runner in ("unittest", "django"):
            module = posixpath.splitext(posixpath.basename(self.path))[0]
            return f"{name} ({module}.{self.klass})"
        return f"{self.path}::{name}"

    @property
    def roles(self) -> dict[str, str]:
        """node id -> 'must_pass' | 'must_fail'."""
        return {self.nodeid(self.must_pass): "must_pass", self.nodeid(self.must_fail): "must_fail"}

    def guest(self) -> dict:
        return {"path": self.path, "names": [self.must_pass, self.must_fail]}


def make_sentinels(nonce: str, test_paths: list[str], runner: str = "pytest") -> Sentinels:
    digest = hashlib.sha256(f"editcredit-sentinel:{nonce}".encode()).hexdigest()
    directory = posixpath.dirname(test_paths[0]) if test_paths else ""
    path = posixpath.join(directory, f"test_{digest[:12]}.py")
    must_pass, must_fail = f"test_{digest[12:24]}", f"test_{digest[24:36]}"
    a, b = int(digest[36:42], 16), int(digest[42:48], 16)
    tests = {
        must_pass: f"def {must_pass}():\n    assert {a} + {b} == {a + b}\n",
        must_fail: f"def {must_fail}():\n    assert {a} * {b} == {a * b + 1}\n",
    }
    order = [must_pass, must_fail] if int(digest[48], 16) % 2 else [must_fail, must_pass]
    if runner in ("unittest", "django"):
        klass = f"Test{digest[49:61]}"
        check = "        self.assertEqual"
        methods = {
            must_pass: f"    def {must_pass}(self):\n{check}({a} + {b}, {a + b})\n",
            must_fail: f"    def {must_fail}(self):\n{check}({a} * {b}, {a * b + 1})\n",
        }
        body = "\n".join(methods[n] for n in order)
        source = f"import unittest\n\n\nclass {klass}(unittest.TestCase):\n{body}"
        return Sentinels(path, must_pass, must_fail, source, runner, klass)
    source = "\n\n".join(tests[n] for n in order)
    return Sentinels(path, must_pass, must_fail, source, runner)
