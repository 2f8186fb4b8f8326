"""Splits, problem statements and the task record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from taskfactory import make_calc_task

from editcredit.data.problem import actual_from_message, call_and_expected
from editcredit.data.splits import assign_split, unit_hash
from editcredit.data.task import Task

FRACTIONS = {"train": 0.6, "dev": 0.1, "holdout": 0.3}


def test_split_is_a_pure_function_of_the_group_key():
    keys = [f"minibugs:mod.f{i}" for i in range(2000)]
    splits = [assign_split(k, FRACTIONS) for k in keys]
    assert splits == [assign_split(k, FRACTIONS) for k in keys]
    share = {s: splits.count(s) / len(splits) for s in FRACTIONS}
    for s, frac in FRACTIONS.items():
        assert abs(share[s] - frac) < 0.04
    assert 0 <= unit_hash("x") < 1


@pytest.mark.parametrize(
    "bad", [{"train": 0.5, "dev": 0.1, "holdout": 0.3}, {"train": 1.0, "dev": 0.0}]
)
def test_bad_fractions(bad):
    with pytest.raises(ValueError):
        assign_split("k", bad)


SRC = """
def test_plain():
    from m import f
    assert f(1, 2) == 3


class TestK:
    def test_plain(self):
        from m import f
        assert f(0, 0) == 0
"""


@pytest.mark.parametrize(
    "nodeid,expected",
    [
        ("t.py::test_plain", ("f(1, 2)", "3")),
        ("t.py::TestK::test_plain", ("f(0, 0)", "0")),
        ("t.py::test_gone", None),
    ],
)
def test_call_and_expected(nodeid, expected):
    assert call_and_expected(SRC, nodeid) == expected


@pytest.mark.parametrize(
    "message,actual",
    [
        ("assert 5 == 3\n +  where 5 = f(1)", "5"),
        ("assert [1, 2] == [2, 1]", "[1, 2]"),
        ("ZeroDivisionError: division by zero", "raises ZeroDivisionError: division by zero"),
        (
            "Failed: DID NOT RAISE <class 'ValueError'>",
            "no exception (DID NOT RAISE <class 'ValueError'>)",
        ),
    ],
)
def test_actual_from_message(message, actual):
    assert actual_from_message(message) == actual


def test_task_needs_one_tree_source_and_full_ids():
    data = make_calc_task().model_dump()
    with pytest.raises(ValidationError, match="exactly one"):
        Task(**{**data, "image": "img"})
    with pytest.raises(ValidationError, match="node id"):
        Task(**{**data, "PASS_TO_PASS": ["test_mul"]})
    with pytest.raises(ValidationError, match="inside the tree"):
        Task(**{**data, "test_paths": ["../x.py"]})
    assert make_calc_task().sha256() == make_calc_task().sha256()
