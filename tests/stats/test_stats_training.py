"""Training-side analyses: step buckets, failure rates, health, the encounter effect per arm."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from editcredit.stats.training import (
    arm_encounter,
    failure_buckets,
    run_curves,
    run_health,
    step_buckets,
    training_record,
)

BOOT = {"n_resamples": 500, "rng_seed": 20260927, "level": 0.95}


@pytest.mark.parametrize(
    "endpoint, n, expected",
    [
        (4, 4, [(1, 1), (2, 2), (3, 3), (4, 4)]),
        (80, 4, [(1, 20), (21, 40), (41, 60), (61, 80)]),
        (10, 3, [(1, 3), (4, 7), (8, 10)]),
        (2, 5, [(1, 1), (2, 2)]),
    ],
)
def test_step_buckets(endpoint, n, expected):
    assert step_buckets(endpoint, n) == expected


def metrics(steps, **cols) -> pd.DataFrame:
    n = len(steps)
    base = {
        "run": ["M-s1"] * n,
        "step": steps,
        "reward_mean": [0.5] * n,
        "pass_rate": [0.5] * n,
        "entropy": [2.0] * n,
        "rollouts": [10] * n,
        "masked_share": [0.0] * n,
        "format_error_rate": [0.0] * n,
        "p2p_regression_rate": [0.0] * n,
        "context_budget_rate": [0.0] * n,
        "generated_tokens": [100] * n,
        "cf_sent": [10] * n,
        "cf_available": [10] * n,
        "cf_nonzero": [5] * n,
        "credit_mass_l1": [0.1] * n,
        "credit_mass_signed": [0.0] * n,
        "alerts": ["[]"] * n,
    }
    base.update(cols)
    return pd.DataFrame(base)


def test_failure_rates_are_rollout_weighted():
    m = metrics(
        [1, 2],
        rollouts=[10, 30],
        format_error_rate=[0.5, 0.1],
        masked_share=[0.0, 0.5],
        p2p_regression_rate=[0.2, 0.4],
    )
    (bucket,) = failure_buckets(m, [(1, 2)])
    assert bucket["rollouts"] == 40
    assert bucket["format_error_rate"] == pytest.approx((5 + 3) / 40)
    # regressions are rated over unmasked rollouts: 10 and 15
    assert bucket["p2p_regression_rate"] == pytest.approx((2 + 6) / 25)


def test_health_summary():
    m = metrics(
        [1, 2, 3],
        cf_sent=[10, 10, 0],
        cf_available=[9, 10, 0],
        entropy=[2.0, 1.5, 1.0],
        alerts=['["cf_unavailable_streak: 16 consecutive unavailable"]', "[]", "[]"],
    )
    h = run_health(m)
    assert h["cf_availability"] == pytest.approx(19 / 20)
    assert (h["entropy_first"], h["entropy_last"]) == (2.0, 1.0)
    assert h["alerts"] == {"cf_unavailable_streak": 1} and h["n_alerts"] == 1
    assert h["generated_tokens"] == 300
    assert run_curves(m)["cf_availability"] == [0.9, 1.0, None]
    none_sent = run_health(metrics([1], cf_sent=[0], cf_available=[0]))
    assert none_sent["cf_availability"] is None


def test_masked_rollouts_are_counted_by_cause():
    m = metrics(
        [1, 2, 3],
        masked_share=[0.3, 0.1, 0.0],
        masked_by_cause=[
            '{"sandbox_died": 2, "timeout_not_reproduced": 1}',
            '{"sandbox_died": 1}',
            "{}",
        ],
    )
    h = run_health(m)
    assert h["masked_by_cause"] == {"sandbox_died": 3, "timeout_not_reproduced": 1}
    assert h["masked_share"] == pytest.approx(4 / 30)
    # metrics written before the column existed count nothing (never a crash)
    assert run_health(metrics([1]))["masked_by_cause"] == {}


def rollouts(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["instance_id", "step", "sample", "Y", "masked"])


def test_encounter_effect_hand_case():
    # run 1: task a seen at steps 1 (0/2) and 3 (2/2) -> +1; task b at step 2 only.
    # run 2: task a seen at steps 2 (1/2), masked at 3, seen at 4 (1/2) -> 0.
    r1 = rollouts(
        [
            ("a", 1, 0, 0, False),
            ("a", 1, 1, 0, False),
            ("a", 3, 0, 1, False),
            ("a", 3, 1, 1, False),
            ("b", 2, 0, 1, False),
        ]
    )
    r2 = rollouts(
        [
            ("a", 2, 0, 1, False),
            ("a", 2, 1, 0, False),
            ("a", 3, 0, 1, True),
            ("a", 4, 0, 1, False),
            ("a", 4, 1, 0, False),
        ]
    )
    enc = arm_encounter({"M-s1": r1, "M-s2": r2}, k=2, **BOOT)
    assert enc["tasks"] == ["a"] and enc["task_differences"] == [0.5]  # mean over the two runs
    assert enc["n_tasks_seen"] == 2 and enc["n_tasks_without_kth"] == 1
    assert enc["mean_difference"] == 0.5 and enc["ci"]["lower"] == enc["ci"]["upper"] == 0.5
    none = arm_encounter({"M-s1": r1}, k=3, **BOOT)
    assert none["n_tasks"] == 0 and none["ci"] is None and none["mean_difference"] is None
    assert none["without_most_influential"] is None


def test_last_encounter_and_the_most_influential_task_left_out():
    # three tasks seen three times: a 0 -> 1 (+1), b 0.5 -> 0.5 (0), c 1 -> 1 (0); d twice only
    rows = []
    for task, rates in {"a": [0, 1, 1], "b": [1, 1, 0], "c": [1, 1, 1], "d": [0, 1]}.items():
        for step, y in enumerate(rates, start=1):
            rows.append((task, step, 0, y, False))
    rows[3:6] = [("b", 1, 0, 1, False), ("b", 2, 0, 0, False), ("b", 3, 0, 1, False)]
    enc = arm_encounter({"O-s1": rollouts(rows)}, k="last", **BOOT)
    assert enc["k"] == "last" and enc["tasks"] == ["a", "b", "c"]
    assert enc["task_differences"] == [1.0, 0.0, 0.0] and enc["n_tasks_without_kth"] == 1
    assert enc["mean_difference"] == pytest.approx(1 / 3)
    assert enc["without_most_influential"]["task"] == "a"
    assert enc["without_most_influential"]["mean_difference"] == 0.0


def test_training_record_is_json_ready():
    m = metrics([1, 2], entropy=[float("nan"), 1.0])
    r = rollouts([("a", 1, 0, 1, False), ("a", 2, 0, 0, False)])
    control = rollouts([("a", 1, 0, 1, False), ("a", 2, 0, 1, False)])
    rec = training_record(
        "M",
        {"M-s1": m},
        {"M-s1": r},
        controls_by_run={"M-s1": control},
        credit_by_run={"M-s1": pd.DataFrame()},
        endpoint_step=2,
        n_buckets=2,
        encounter_ks=[2],
        **BOOT,
    )
    from editcredit.stats._records import to_plain

    text = json.dumps(to_plain(rec), allow_nan=False)
    assert json.loads(text)["encounter"][0]["task_differences"] == [-1.0]
    assert rec["health"]["runs"] == 1 and len(rec["failures"]) == 2
    assert rec["learning_vs_control"]["M-s1"]["delta"] == [0.0, -1.0]
    assert rec["health"]["delta_last_quarter"] == -1.0
    assert np.isnan(m["entropy"][0])


def test_the_training_record_is_its_typed_record():
    """The arm's record (results/stats/training_{arm}.json) has the keys of TrainingRecord in
    the written order, nested records too (health pooled, per run, failures, encounter)."""
    from record_shapes import assert_record

    from editcredit.stats._records import to_plain
    from editcredit.stats.records import TrainingRecord

    m = metrics([1, 2, 3], masked_by_cause=['{"timeout": 1}', "", "{}"])
    r = rollouts([(t, s, 0, int(s > 1 and t != "b"), False) for t in "abc" for s in (1, 2, 3)])
    rec = training_record(
        "M",
        {"M-s1": m},
        {"M-s1": r},
        controls_by_run={"M-s1": r},
        credit_by_run={"M-s1": pd.DataFrame()},
        endpoint_step=3,
        n_buckets=2,
        encounter_ks=[2],
        **BOOT,
    )
    assert rec["encounter"][-1]["without_most_influential"] is not None
    assert_record(rec, TrainingRecord)
    assert_record(json.loads(json.dumps(to_plain(rec))), TrainingRecord)
