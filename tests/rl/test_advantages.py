"""GRPO group advantages (METHOD §4): hand-computed tables, masked members, zero-variance groups."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from editcredit.rl.advantages import group_advantages, token_advantages, weigh_negative

S3 = math.sqrt(3.0)

# (name, rewards, group ids, normalize_std, expected advantages)
ROWS = [
    ("one group", [1.0, 0.0, 0.0, -0.5], "aaaa", False, [0.875, -0.125, -0.125, -0.625]),
    (
        "terminal rewards with penalties",
        [-0.5, 1.0, 0.75, 0.0],
        "aaaa",
        False,
        [-0.8125, 0.6875, 0.4375, -0.3125],
    ),
    ("two interleaved groups", [1.0, 0.0, 0.5, 0.5], "abab", False, [0.25, -0.25, -0.25, 0.25]),
    ("masked member excluded from mean", [1.0, None, 0.0], "aaa", False, [0.5, None, -0.5]),
    ("masked members in two groups", [None, 1.0, 0.0, None], "aabb", False, [None, 0.0, 0.0, None]),
    ("all masked", [None, None], "aa", False, [None, None]),
    ("all masked, std on", [None, None], "aa", True, [None, None]),
    ("zero variance kept as zeros", [0.0, 0.0, 0.0], "aaa", False, [0.0, 0.0, 0.0]),
    ("zero variance, std on", [1.0, 1.0, 1.0], "aaa", True, [0.0, 0.0, 0.0]),
    ("zero variance with a masked member", [1.0, None, 1.0], "aaa", True, [0.0, None, 0.0]),
    ("singleton group", [0.7], "a", True, [0.0]),
    ("std on: two members", [1.0, 0.0], "aa", True, [1.0, -1.0]),
    # mean 0.25, centred (0.75, -0.25 x3), population var 0.1875, std sqrt(3)/4
    ("std on: population std", [1.0, 0.0, 0.0, 0.0], "aaaa", True, [S3, -1 / S3, -1 / S3, -1 / S3]),
    ("std on: masked excluded from std", [1.0, None, 0.0], "aaa", True, [1.0, None, -1.0]),
    (
        "std off: same group unscaled",
        [1.0, 0.0, 0.0, 0.0],
        "aaaa",
        False,
        [0.75, -0.25, -0.25, -0.25],
    ),
    # group a: mean 0.5, std 0.5; group b: zero variance
    ("std on: mixed groups", [1.0, 0.5, 0.0, 0.5], "abab", True, [1.0, 0.0, -1.0, 0.0]),
]


@pytest.mark.parametrize(
    ("rewards", "groups", "normalize_std", "expected"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_group_advantages_table(rewards, groups, normalize_std, expected):
    got = group_advantages(rewards, list(groups), normalize_std)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None
        else:
            assert g == pytest.approx(e, abs=1e-12)


def test_std_below_eps_leaves_centred_values():
    got = group_advantages([1.0, 1.0 + 2e-9], ["a", "a"], normalize_std=True, eps=1e-6)
    assert got == pytest.approx([-1e-9, 1e-9], abs=1e-15)


def test_std_at_or_above_eps_divides():
    got = group_advantages([0.0, 2e-6], ["a", "a"], normalize_std=True, eps=1e-6)
    assert got == pytest.approx([-1.0, 1.0])


def test_centred_group_sums_to_zero_and_none_positions_are_kept():
    rng = random.Random(0)
    rewards = [rng.choice([None, 0.0, 1.0, -0.5, 0.75, 1.25]) for _ in range(40)]
    groups = [f"task{i % 5}" for i in range(40)]
    for normalize in (False, True):
        adv = group_advantages(rewards, groups, normalize)
        assert [a is None for a in adv] == [r is None for r in rewards]
        for g in set(groups):
            members = [a for a, gid in zip(adv, groups, strict=True) if gid == g and a is not None]
            assert math.fsum(members) == pytest.approx(0.0, abs=1e-9)


def test_inputs_are_not_modified():
    rewards = [1.0, None, 0.0]
    groups = ["a", "a", "a"]
    group_advantages(rewards, groups, True)
    assert rewards == [1.0, None, 0.0]
    assert groups == ["a", "a", "a"]


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="3 rewards but 2 group ids"):
        group_advantages([1.0, 0.0, 1.0], ["a", "a"], False)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_reward_is_an_error_not_a_mask(bad):
    with pytest.raises(ValueError, match="non-finite reward"):
        group_advantages([1.0, bad], ["a", "a"], False)


@pytest.mark.parametrize(
    ("seq_adv", "n", "expected"),
    [(0.5, 3, [0.5, 0.5, 0.5]), (-0.25, 1, [-0.25]), (1.0, 0, []), (0.0, 2, [0.0, 0.0])],
)
def test_token_advantages(seq_adv, n, expected):
    assert token_advantages(seq_adv, n) == expected


def test_token_advantages_rejects_negative_length():
    with pytest.raises(ValueError, match="n_tokens"):
        token_advantages(1.0, -1)


# (weight, token advantages, expected): negatives scaled, positives and zeros untouched
WEIGHTS = [
    (1.0, [0.5, -0.5, 0.0, -0.25], [0.5, -0.5, 0.0, -0.25]),
    (0.0, [0.5, -0.5, 0.0, -0.25], [0.5, 0.0, 0.0, 0.0]),
    (0.25, [0.5, -0.5, 0.0, -0.25], [0.5, -0.125, 0.0, -0.0625]),
    (0.5, [], []),
]


@pytest.mark.parametrize(("weight", "adv", "expected"), WEIGHTS)
def test_weigh_negative_table(weight, adv, expected):
    assert weigh_negative(np.array(adv), weight).tolist() == expected


@pytest.mark.parametrize("weight", [-0.1, 1.01, math.nan])
def test_weigh_negative_rejects_weights_outside_0_1(weight):
    with pytest.raises(ValueError, match="negative advantage weight"):
        weigh_negative(np.array([1.0]), weight)
