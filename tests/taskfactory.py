"""Shared test data: the repository paths, the default config, a crafted toy task."""

from __future__ import annotations

import os

from editcredit.config import load_config
from editcredit.data.task import Task
from editcredit.sandbox.patches import diff_trees

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = load_config(os.path.join(REPO, "config", "config.yaml"))
#: The default's agent without the candidate list, for the toy studies whose assertions were
#: written for that environment (the SLURM studies, the rebuild test): their policy is trained
#: with it too (``policyfactory.train_toy_policy(agent=TOY_AGENT)``)
TOY_AGENT = {**CONFIG["agent"], "candidates": False}

CALC_BUG = '''def add(a, b):
    """Sum."""
    return a - b


def mul(a, b):
    return a * b
'''
CALC_FIXED = CALC_BUG.replace("return a - b", "return a + b")
CALC_TESTS = """import pytest


def test_add():
    from calc import add
    assert add(2, 3) == 5


def test_mul():
    from calc import mul
    assert mul(2, 3) == 6


@pytest.mark.parametrize("a,b", [(1, 2), (0, 0)], ids=["one two", "zero zero"])
def test_mul_commutes(a, b):
    from calc import mul
    assert mul(a, b) == mul(b, a)


class TestMore:
    def test_mul(self):
        from calc import mul
        assert mul(-1, 4) == -4
"""


def make_calc_task(timeout_s: float = 10.0) -> Task:
    return Task(
        instance_id="toy__calc__add",
        repo="toy/calc",
        problem_statement="add(2, 3) returns -1, expected 5",
        patch=diff_trees({"calc.py": CALC_BUG}, {"calc.py": CALC_FIXED}),
        FAIL_TO_PASS=["test_calc.py::test_add"],
        PASS_TO_PASS=[
            "test_calc.py::test_mul",
            "test_calc.py::test_mul_commutes[one two]",
            "test_calc.py::test_mul_commutes[zero zero]",
            "test_calc.py::TestMore::test_mul",
        ],
        statement_test="test_calc.py::test_add",
        test_paths=["test_calc.py"],
        files={"calc.py": CALC_BUG, "test_calc.py": CALC_TESTS},
        timeout_s=timeout_s,
        suite="toy",
        meta={"seed_function": "calc.add"},
    )


#: The utility weights of the repository config (``grading.f_weight``, ``grading.g_weight``):
#: the grader has no defaults, so a test grades with what the study configures.
WEIGHTS = (float(CONFIG["grading"]["f_weight"]), float(CONFIG["grading"]["g_weight"]))


def write_control_records(directory, times) -> str:
    """The control rule's per-task records in ``directory`` (created), as far as the gold times
    go: ``times`` maps instance ids to the gold run's ``timings`` (None: a gold run that did
    not finish, no times). Returns the directory as a string."""
    import json
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for instance_id, timings in times.items():
        sandbox = None if timings is None else {"timings": timings}
        record = {"instance_id": instance_id, "gold": {"sandbox": sandbox}}
        (directory / f"{instance_id}.json").write_text(json.dumps(record))
    return str(directory)


def count_gold_runs(monkeypatch) -> list[str]:
    """The task ids local sandboxes spend a gold run on, appended as they run (the gold runs
    still happen)."""
    from editcredit.sandbox.local_backend import LocalSandbox

    ids: list[str] = []
    original = LocalSandbox.measure_gold

    def counting(self, task):
        ids.append(task.instance_id)
        return original(self, task)

    monkeypatch.setattr(LocalSandbox, "measure_gold", counting)
    return ids


def count_limits(monkeypatch) -> list[tuple[str, bool]]:
    """(task id, whether its limits came from gold times) of each run local sandboxes make
    under per-test limits, appended as they run (a gold run, held to the whole-run limit only,
    is not one of them)."""
    from editcredit.sandbox.local_backend import LocalSandbox

    runs: list[tuple[str, bool]] = []
    original = LocalSandbox._grade

    def counting(self, task, patch, limits, select=None):
        if limits is not None:
            runs.append((task.instance_id, bool(limits["gold_timed"])))
        return original(self, task, patch, limits, select)

    monkeypatch.setattr(LocalSandbox, "_grade", counting)
    return runs
