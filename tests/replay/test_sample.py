"""The replay sample: by hash, deterministic, order-free, max(ceil(fraction x n), minimum)."""

from __future__ import annotations

import hashlib
import random

import pytest

from editcredit.replay.sample import choose, sample_order, sample_size


@pytest.mark.parametrize(
    "stored, fraction, minimum, expected",
    [
        (0, 0.05, 20, 0),  # nothing stored, nothing to replay
        (7, 0.05, 20, 7),  # fewer than the minimum: all of them
        (20, 0.05, 20, 20),
        (100, 0.05, 20, 20),  # 5 % is 5: the minimum wins
        (100, 0.05, 0, 5),  # 0.05 x 100 is 5.000000000000001 as a float, still 5
        (448, 0.05, 20, 23),  # ceil(22.4)
        (704, 0.05, 20, 36),  # ceil(35.2)
        (1000, 0.05, 20, 50),
        (1000, 0.0, 20, 20),
        (1000, 1.0, 20, 1000),
        (3, 0.5, 0, 2),  # ceil(1.5)
    ],
)
def test_sample_size(stored, fraction, minimum, expected):
    assert sample_size(stored, fraction, minimum) == expected


@pytest.mark.parametrize(
    "fraction, minimum, message",
    [(1.5, 20, "replay.fraction"), (-0.1, 20, "replay.fraction"), (0.05, -1, "replay.minimum")],
)
def test_bad_settings_are_named(fraction, minimum, message):
    with pytest.raises(ValueError, match=message):
        sample_size(10, fraction, minimum)


KEYS = [f"final:O-s42:{s}:task_{t}:{i}" for s in (1, 2) for t in range(5) for i in range(4)]
KEYS += [f"counterfactual:B-s42:{s}:task_{t}:{i}" for s in (1, 2) for t in range(5) for i in (0, 2)]


def test_the_sample_is_the_lowest_hashes_in_hash_order():
    chosen = choose(KEYS, 0.05, 5)
    ranked = sorted(KEYS, key=lambda k: hashlib.sha256(k.encode()).hexdigest())
    assert chosen == ranked[:5]
    assert [sample_order(k) for k in chosen] == sorted(sample_order(k) for k in chosen)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_sample_does_not_depend_on_the_order_of_the_keys(seed):
    shuffled = list(KEYS)
    random.Random(seed).shuffle(shuffled)
    assert choose(shuffled, 0.1, 3) == choose(KEYS, 0.1, 3)
    assert choose(reversed(shuffled), 0.1, 3) == choose(KEYS, 0.1, 3)


def test_a_larger_sample_extends_a_smaller_one():
    assert choose(KEYS, 0.0, 12)[:6] == choose(KEYS, 0.0, 6)
    assert choose(KEYS, 0.2, 0) == choose(KEYS, 0.0, 12)  # ceil(0.2 x 60) = 12


def test_a_key_listed_twice_is_refused_by_name():
    with pytest.raises(ValueError, match="final:O-s42:1:task_0:0.*listed twice"):
        choose([*KEYS, KEYS[0]], 0.05, 20)
