"""TensorBoard scalars of a metrics row: which tags, which values, which are left out."""

from __future__ import annotations

import math

import pytest

from editcredit.rl.scalars import TAGS, ScalarLog, read_scalars, scalar_values

ROW = {
    "reward_mean": 0.25,
    "pass_rate": 0.5,
    "entropy": 0.1,
    "cf_sent": 4,
    "cf_available": 3,
    "seconds_rollout": 2.0,
    "seconds_counterfactual": 1.0,
    "seconds_update": 0.5,
    "loss": math.nan,
    "alerts": "[]",
    "masked_share": True,
}


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("reward/mean", 0.25),
        ("reward/pass_rate", 0.5),
        ("policy/entropy", 0.1),
        ("counterfactual/sent", 4.0),
        ("counterfactual/available_share", 0.75),
        ("seconds/step", 3.5),
        ("update/loss", None),  # not finite: left out
        ("rollouts/masked_share", None),  # not a number: left out
        ("credit/mass_l1", None),  # missing: left out
    ],
)
def test_scalar_values(tag, expected):
    values = scalar_values(ROW)
    assert values.get(tag) == expected


def test_no_availability_share_without_queries():
    assert "counterfactual/available_share" not in scalar_values({**ROW, "cf_sent": 0})


def test_every_tag_names_a_metrics_column_or_a_phase_of_the_sidecar():
    from editcredit.rl.records import METRICS_SCHEMA
    from editcredit.rl.timing import PHASES

    assert set(TAGS.values()) <= set(METRICS_SCHEMA.names) | set(PHASES)
    assert not set(PHASES) & set(METRICS_SCHEMA.names)  # the clock's, not the record's


def test_written_scalars_read_back_by_step(tmp_path):
    log = ScalarLog(tmp_path / "tb", 3, 4)
    log.write(3, ROW)
    log.write(4, {**ROW, "pass_rate": 0.75})
    log.close()
    assert len(list((tmp_path / "tb").glob("*.steps_3-4"))) == 1
    read = read_scalars(tmp_path / "tb")
    assert read["reward/pass_rate"] == [(3, 0.5), (4, 0.75)]
    assert read["seconds/step"] == [(3, 3.5), (4, 3.5)]
