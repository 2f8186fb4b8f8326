"""The identifiers renaming augmentation may change (``expert_corpus.seed_identifiers``): a
single-bug task's ``meta.seed_function`` and a multi-bug task's ``meta.seed_functions`` alike,
the functions' names first."""

from __future__ import annotations

import pytest

from editcredit.agent.expert_corpus import seed_identifiers
from editcredit.data.task import Task

SOURCE = '''"""Two functions."""


def scale(value, factor):
    scaled = value * factor
    return scaled


def shift(value, by):
    for step in range(by):
        value += 1
    return value


def other(text):
    return text
'''


def _task(meta: dict, files: dict[str, str] | None) -> Task:
    from taskfactory import make_calc_task

    return make_calc_task().model_copy(update={"meta": meta, "files": files})


FILES = {"m.py": SOURCE}


@pytest.mark.parametrize(
    ("meta", "files", "expected"),
    [
        # single bug: the function, then its parameters and locals (two characters or more)
        ({"seed_function": "m.scale"}, FILES, ["scale", "value", "factor", "scaled"]),
        ({"seed_function": "m.shift"}, FILES, ["shift", "value", "by", "step"]),
        # multi-bug: every seed function's name first, then each one's names once
        (
            {"seed_functions": ["m.scale", "m.shift"]},
            FILES,
            ["scale", "shift", "value", "factor", "scaled", "by", "step"],
        ),
        (
            {"seed_functions": ["m.shift", "m.scale"]},
            FILES,
            ["shift", "scale", "value", "by", "step", "factor", "scaled"],
        ),
        # a file the task lacks, or a task without inline files: the names alone
        ({"seed_function": "missing.scale"}, FILES, ["scale"]),
        (
            {"seed_functions": ["m.scale", "n.shift"]},
            FILES,
            ["scale", "shift", "value", "factor", "scaled"],
        ),
        ({"seed_functions": ["m.scale", "m.shift"]}, None, ["scale", "shift"]),
        # no seed function named: nothing to rename
        ({}, FILES, []),
    ],
)
def test_seed_identifiers(meta, files, expected):
    assert seed_identifiers(_task(meta, files)) == expected
