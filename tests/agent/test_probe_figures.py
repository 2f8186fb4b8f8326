"""The probe's figures: pass rates per split and reward variance inside groups."""

from __future__ import annotations

import json

import pytest

from editcredit.agent.probe import probe_figures, reward_groups, share_unequal


def row(task, y, reward=None, blocks=1, fmt=False, masked=False):
    return {
        "instance_id": task,
        "Y": y,
        "reward": float(y) if reward is None else reward,
        "edit_blocks": json.dumps([{}] * blocks),
        "format_error": fmt,
        "masked": masked,
        "end_reason": "submit",
    }


@pytest.mark.parametrize(
    ("groups", "share"),
    [
        ({}, None),
        ({"a": [0.0, 0.0]}, 0.0),
        ({"a": [0.0, 1.0], "b": [1.0, 1.0]}, 0.5),
        ({"a": [0.0, -0.5], "b": [1.0, 0.0], "c": [0.0]}, 2 / 3),
    ],
)
def test_share_of_groups_with_unequal_rewards(groups, share):
    assert share_unequal(groups) == (None if share is None else pytest.approx(share))


def test_masked_rows_are_left_out_of_groups():
    groups = reward_groups([row("a", 1), row("a", 0, masked=True), row("b", 0)])
    assert groups == {"a": [1.0], "b": [0.0]}


def test_figures_report_dev_beside_train_and_holdout():
    train = [row("t1", 1), row("t1", 0), row("t2", 1, blocks=3), row("t2", 1)]
    dev = [row("d1", 0, reward=-0.5, fmt=True), row("d1", 1, blocks=2)]
    holdout = [row("h1", 0), row("h1", 0), row("h2", 1, blocks=2), row("h2", 0)]
    f = probe_figures(train, holdout, dev)
    assert f["train_pass_at_1"] == 0.75
    assert f["dev_pass_at_1"] == 0.5
    assert f["holdout_pass_at_1"] == 0.25
    assert f["share_groups_with_reward_variance"] == 0.5
    assert f["holdout_share_groups_with_reward_variance"] == 0.5
    assert f["format_error_rate"] == pytest.approx(1 / 10)
    assert f["share_two_or_more_edit_blocks"] == pytest.approx(3 / 10)
    assert f["trajectories"] == 10
