"""Test runners other than pytest: their commands, labels, test ids and protected files.

Pure functions of a task (no I/O). A task names its runner in ``test_runner``
(:data:`editcredit.data.task.RUNNERS`) and may give the runner's command in ``test_command``
(an argument vector without test labels; empty = :data:`DEFAULT_COMMANDS`). The graded run is the
command plus labels from the task's ``test_paths``; a run of selected ids (the agent's visible
tests) is the command plus labels naming those ids. Test ids are in the runner's own naming:

- ``unittest`` and ``django``: ``test_name (module.Class)`` (SWE-bench's naming of Django's
  tests); ``module.Class.test_name`` and Python 3.11's ``test_name (module.Class.test_name)``
  name the same test;
- ``sympy``: the test function's name (any file's test of that name) or ``path::name`` (that
  file's test only); the observed items are ``path::name`` (SymPy's own runner and its pytest
  runner alike).
"""

from __future__ import annotations

import posixpath
import re

from editcredit.data.task import Task

DEFAULT_COMMANDS: dict[str, list[str]] = {
    "unittest": ["python3", "-m", "unittest"],
    "django": ["./tests/runtests.py", "--verbosity", "2", "--parallel", "1"],
    "sympy": ["bin/test", "-C", "--verbose"],
}
#: Files a patch may not change for a runner (its driver and reporter), beyond test paths.
RUNNER_FILES: dict[str, tuple[str, ...]] = {
    "unittest": (),
    "django": ("tests/runtests.py",),
    "sympy": ("bin/test", "sympy/testing/runtests.py", "sympy/utilities/runtests.py"),
}
_PAREN = re.compile(r"^(?P<name>[^\s()]+) \((?P<where>[^()]+)\)$")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")


def command_of(task: Task) -> list[str]:
    """The runner's command without labels (the task's own, else the runner's default)."""
    return list(task.test_command) or list(DEFAULT_COMMANDS[task.test_runner])


def path_labels(task: Task, paths: list[str]) -> list[str]:
    """Labels that run the test files ``paths``: unittest and SymPy take the paths, Django's
    ``runtests.py`` dotted modules under ``tests/``."""
    if task.test_runner == "django":
        out = []
        for path in paths:
            stem = path[: -len(".py")] if path.endswith(".py") else path
            parts = stem.split("/")
            if parts[0] == "tests":
                parts = parts[1:]
            out.append(".".join(parts))
        return out
    return list(paths)


def id_labels(task: Task, ids: list[str]) -> list[str]:
    """Arguments that run only the tests ``ids`` (SymPy: the test files, filtered by name).
    A unittest id that names no class and method (a docstring line) cannot be selected and is
    left out; a selection of no nameable id is refused (a command without labels would run
    every test, hidden ones included)."""
    if task.test_runner == "sympy":
        names = list(dict.fromkeys(sympy_parts(i)[1] for i in ids))
        # an id with a path is run from its own file only
        paths = [sympy_parts(i)[0] for i in ids]
        files = list(task.test_paths) if "" in paths else list(dict.fromkeys(paths))
        return [*files, "-k", *names]
    labels = [dotted(i) for i in ids if _PAREN.match(canonical_id(task.test_runner, i))]
    if not labels:
        raise ValueError(
            f"{task.instance_id}: none of the selected test ids names a test to the "
            f"{task.test_runner} runner: {ids[:3]}"
        )
    return labels


def command_for(task: Task, select: list[str] | None) -> list[str]:
    """The argument vector of one run: all test files, or the selected ids."""
    labels = id_labels(task, select) if select else path_labels(task, list(task.test_paths))
    return [*command_of(task), *labels]


def rerun_fields(task: Task) -> dict | None:
    """What the guest needs to rerun one test alone after it exceeded its own limit: the
    command without labels and (SymPy) the test files."""
    if task.test_runner == "pytest":
        return None
    return {"prefix": command_of(task), "paths": list(task.test_paths)}


def canonical_id(runner: str, test_id: str) -> str:
    """The form a runner's test id is compared in (unittest's three spellings are one)."""
    if runner in ("unittest", "django"):
        match = _PAREN.match(test_id.strip())
        if match:
            name, where = match["name"], match["where"]
            if where.endswith("." + name):  # Python 3.11: test_x (module.Class.test_x)
                where = where[: -len(name) - 1]
            return f"{name} ({where})"
        if _DOTTED.match(test_id.strip()):
            where, name = test_id.strip().rsplit(".", 1)
            return f"{name} ({where})"
    return test_id


def dotted(test_id: str) -> str:
    """``module.Class.test_name`` of a unittest id (a label every unittest runner accepts)."""
    match = _PAREN.match(canonical_id("unittest", test_id))
    return f"{match['where']}.{match['name']}" if match else test_id


def matches(runner: str, expected_id: str, nodeid: str) -> bool:
    """Does the observed item ``nodeid`` belong to the expected id (pytest's families are
    handled by the verdicts module)?"""
    if runner == "sympy":
        path, name = sympy_parts(expected_id)
        seen_path, seen_name = sympy_parts(nodeid)
        return name == seen_name and (not path or path == seen_path)
    return canonical_id(runner, expected_id) == canonical_id(runner, nodeid)


def sympy_parts(test_id: str) -> tuple[str, str]:
    """(normalized file path or '', function name) of a SymPy id ``[path::]name``."""
    path, sep, name = test_id.strip().rpartition("::")
    return (posixpath.normpath(path) if sep and path else ""), name


def protected_files(task: Task) -> list[str]:
    """Paths a patch may not change for the task's runner: its driver script (a path in the
    command) and the runner's reporter module."""
    if task.test_runner == "pytest":
        return []
    out = list(RUNNER_FILES[task.test_runner])
    for arg in command_of(task):
        norm = posixpath.normpath(arg)
        if "/" in arg and not arg.startswith(("-", "/")) and not norm.startswith(".."):
            out.append(norm)
    return sorted(set(out))
