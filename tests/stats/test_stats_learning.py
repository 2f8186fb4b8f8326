"""The run against its no-learning control: hand cases."""

from __future__ import annotations

import pandas as pd
import pytest

from editcredit.stats.learning import (
    delta_ci,
    last_quarter,
    learning_vs_control,
    step_pass_rates,
)


def table(rows) -> pd.DataFrame:
    """rows: (step, Y, masked)."""
    return pd.DataFrame(rows, columns=["step", "Y", "masked"])


@pytest.mark.parametrize(
    ("endpoint", "steps"),
    [
        (1, [1]),
        (4, [4]),
        (5, [4, 5]),
        (8, [7, 8]),
        (16, [13, 14, 15, 16]),
        (80, list(range(61, 81))),
    ],
)
def test_last_quarter(endpoint, steps):
    assert last_quarter(endpoint) == steps


def test_pass_rates_ignore_masked_rollouts_and_mark_empty_steps():
    t = table([(1, 1, False), (1, 0, False), (1, 0, True), (2, 0, True), (3, 1, False)])
    assert step_pass_rates(t, 3) == [0.5, None, 1.0]


def test_a_run_that_learns_and_one_that_degrades():
    control = table([(s, y, False) for s in (1, 2, 3, 4) for y in (1, 0)])  # 0.5 every step
    learns = table([(1, 1, False), (1, 0, False)] + [(s, 1, False) for s in (2, 3, 4)])
    rec = learning_vs_control(learns, control, 4)
    assert rec["delta"] == [0.0, 0.5, 0.5, 0.5]
    assert rec["delta_last_quarter"] == 0.5 and rec["delta_after_first"] == 0.5
    assert rec["run_pass_last_quarter"] == 1.0 and rec["control_pass_last_quarter"] == 0.5
    assert rec["first_step_equal"]
    worse = table([(1, 1, False), (1, 0, False)] + [(s, 0, False) for s in (2, 3, 4)])
    assert learning_vs_control(worse, control, 4)["delta_last_quarter"] == -0.5


def test_a_first_step_that_differs_is_reported():
    control = table([(1, 1, False), (2, 1, False)])
    run = table([(1, 0, False), (2, 1, False)])
    rec = learning_vs_control(run, control, 2)
    assert not rec["first_step_equal"] and rec["delta"] == [-1.0, 0.0]


def test_unknown_steps_stay_unknown():
    control = table([(1, 1, False), (2, 1, True)])
    run = table([(1, 1, False), (2, 1, False)])
    rec = learning_vs_control(run, control, 2)
    assert rec["delta"] == [0.0, None] and rec["delta_last_quarter"] is None


#: The default config's stats.bootstrap rng_seed and level.
CI = {"seed": 20260927, "level": 0.95}


def groups(rows) -> pd.DataFrame:
    """rows: (step, task, Y, masked)."""
    return pd.DataFrame(rows, columns=["step", "instance_id", "Y", "masked"])


def test_the_interval_of_a_constant_paired_difference_is_that_difference():
    control = groups([(s, t, y, False) for s in (1, 2) for t in "ab" for y in (0, 1)])
    run = groups([(s, t, 1, False) for s in (1, 2) for t in "ab" for _ in (0, 1)])
    assert delta_ci(run, control, [1, 2], resamples=200, **CI) == (0.5, 0.5)


def test_the_interval_pairs_groups_and_spans_their_spread():
    control = groups([(1, t, 0, False) for t in "abcd"])
    run = groups([(1, "a", 1, False), (1, "b", 1, False), (1, "c", 0, False), (1, "d", 0, False)])
    low, high = delta_ci(run, control, [1], resamples=2000, **CI)
    assert 0.0 <= low < 0.5 < high <= 1.0


def test_masked_rollouts_and_other_steps_stay_out():
    control = groups([(1, "a", 0, False), (2, "a", 0, False)])
    run = groups([(1, "a", 1, True), (1, "a", 0, False), (2, "a", 1, False)])
    assert delta_ci(run, control, [1], resamples=50, **CI) == (0.0, 0.0)
    with pytest.raises(ValueError, match="no .step, task. group in steps \\[3\\]"):
        delta_ci(run, control, [3], resamples=50, **CI)
