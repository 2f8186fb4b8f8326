"""Eval-set score and bounds (METHOD §8) on hand-computed cases."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from editcredit.stats import EvalSetScore, score_slots, score_table


def _rows(spec: dict[str, list]) -> tuple[list, list, list]:
    """{task: [v0, v1, ...]} -> parallel (task, sample, value) columns."""
    tasks, samples, values = [], [], []
    for task, vals in spec.items():
        for i, v in enumerate(vals):
            tasks.append(task)
            samples.append(i)
            values.append(v)
    return tasks, samples, values


# (name, {task: values}, n, planned, N, K, S, lower, upper, score, task_lower, task_upper)
CASES = [
    (
        "all resolved",
        {"a": [1, 0], "b": [1, 1]},
        2,
        None,
        4, 4, 3, 3 / 4, 3 / 4, 3 / 4,
        (0.5, 1.0),
        (0.5, 1.0),
    ),
    (
        "one null slot",
        {"a": [1, None], "b": [0, 0]},
        2,
        None,
        4, 3, 1, 1 / 4, 2 / 4, None,
        (0.5, 0.0),
        (1.0, 0.0),
    ),
    (
        "none resolved",
        {"a": [None, None], "b": [None, None]},
        2,
        None,
        4, 0, 0, 0.0, 1.0, None,
        (0.0, 0.0),
        (1.0, 1.0),
    ),
    (
        "nan and missing rows count as unresolved",
        {"a": [1, 1], "b": [float("nan")]},
        2,
        ["a", "b", "c"],
        6, 2, 2, 2 / 6, 6 / 6, None,
        (1.0, 0.0, 0.0),
        (1.0, 1.0, 1.0),
    ),
    (
        "booleans and unequal task rates",
        {"a": [True, False, False, False], "b": [True, True, True, False], "c": [0, 0, 0, 0]},
        4,
        None,
        12, 12, 4, 4 / 12, 4 / 12, 4 / 12,
        (0.25, 0.75, 0.0),
        (0.25, 0.75, 0.0),
    ),
    (
        "all unresolved but one success",
        {"a": [1, None, None]},
        3,
        None,
        3, 1, 1, 1 / 3, 1.0, None,
        (1 / 3,),
        (1.0,),
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "n", "planned", "N", "K", "S", "lower", "upper", "score", "t_lo", "t_hi"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_score_bounds_hand_cases(spec, n, planned, N, K, S, lower, upper, score, t_lo, t_hi):
    result = score_slots(*_rows(spec), n_samples=n, planned_tasks=planned)
    assert (result.n_planned, result.n_known, result.n_successes) == (N, K, S)
    assert result.n_unresolved == N - K
    assert result.lower == pytest.approx(S / N) == pytest.approx(lower)
    assert result.upper == pytest.approx((S + N - K) / N) == pytest.approx(upper)
    assert result.task_lower == pytest.approx(t_lo)
    assert result.task_upper == pytest.approx(t_hi)
    if score is None:
        assert result.score is None
        assert not result.resolved
    else:
        assert result.resolved
        assert result.score == pytest.approx(score)
        # the definition: mean over samples per task, then equal-weight mean over tasks
        two_stage = math.fsum(t for t in result.task_scores) / len(result.tasks)
        assert result.score == pytest.approx(two_stage, abs=1e-15)
        assert result.score == result.lower == result.upper


def test_missing_rows_are_counted_separately():
    result = score_slots(["a", "a"], [0, 1], [1, None], n_samples=2, planned_tasks=["a", "b"])
    assert result.n_unresolved == 3
    assert result.n_missing_rows == 2
    assert result.task_scores == (None, None)


def test_table_inputs_dict_and_pandas_with_na():
    table = {"task": ["x", "x", "y", "y"], "sample": [0, 1, 0, 1], "value": [1, 0, 1, None]}
    from_dict = score_table(table, n_samples=2)
    frame = pd.DataFrame(table).astype({"value": "Int64"})  # nullable ints: pandas.NA
    from_frame = score_table(frame, n_samples=2)
    assert from_dict == from_frame
    assert (from_dict.lower, from_dict.upper, from_dict.score) == (0.5, 0.75, None)


def test_custom_column_names():
    table = {"instance": ["x"], "k": [0], "resolved": [1]}
    out = score_table(
        table, n_samples=1, task_column="instance", sample_column="k", value_column="resolved"
    )
    assert out.score == 1.0


def test_to_dict_is_json_ready():
    import json

    out = score_slots(["a", "a"], [0, 1], [1, None], n_samples=2).to_dict()
    assert out["score"] is None and out["resolved"] is False
    assert out["tasks"] == ["a"] and out["task_upper"] == [1.0]
    json.dumps(out)


def test_record_is_frozen():
    out = score_slots(["a"], [0], [1], n_samples=1)
    assert isinstance(out, EvalSetScore)
    with pytest.raises(AttributeError):
        out.score = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("tasks", "samples", "values", "kwargs", "match"),
    [
        (["a"], [0], [2], {}, r"row 0 .*not 0, 1 or null"),
        (["a"], [0], [0.5], {}, r"not 0, 1 or null"),
        (["a"], [0], ["yes"], {}, r"not 0, 1 or null"),
        (["a"], [0], ["1"], {}, r"not 0, 1 or null"),
        (["a", "a"], [0, 0], [1, 0], {}, r"row 1 .*duplicate slot.*row 0"),
        (["a"], [2], [1], {}, r"sample index"),
        (["a"], [-1], [1], {}, r"sample index"),
        (["a"], [0.5], [1], {}, r"sample index"),
        (["a"], [True], [1], {}, r"sample index"),
        (["z"], [0], [1], {"planned_tasks": ["a"]}, r"not in planned_tasks"),
        (["a"], [0, 1], [1], {}, r"differ in length"),
        ([], [], [], {}, r"no planned tasks"),
        (["a"], [0], [1], {"planned_tasks": ["a", "a"]}, r"duplicate task"),
    ],
)
def test_bad_rows_are_named(tasks, samples, values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        score_slots(tasks, samples, values, n_samples=2, **kwargs)


def test_missing_column():
    with pytest.raises(ValueError, match="no column 'value'"):
        score_table({"task": [], "sample": []}, n_samples=1)
