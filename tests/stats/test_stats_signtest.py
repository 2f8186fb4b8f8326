"""Wins/losses/ties per task and the two-sided sign test on hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.stats import sign_test

# (per-task differences, wins, losses, ties, exact two-sided p-value or None)
CASES = [
    ([0.1, 0.2, -0.1, 0.0, 0.0], 2, 1, 2, 1.0),
    ([1.0] * 10, 10, 0, 0, 2 / 1024),
    ([1.0] * 9 + [-1.0], 9, 1, 0, 22 / 1024),
    ([-0.0625] * 5, 0, 5, 0, 2 / 32),
    ([1, 1, 1, -1, -1, -1, 0], 3, 3, 1, 1.0),
    ([0.0, -0.0, 0.0], 0, 0, 3, None),
    ([], 0, 0, 0, None),
]


@pytest.mark.parametrize(("diffs", "wins", "losses", "ties", "p"), CASES)
def test_sign_test_hand_cases(diffs, wins, losses, ties, p):
    out = sign_test(diffs)
    assert (out.wins, out.losses, out.ties, out.n_nontied) == (wins, losses, ties, wins + losses)
    if p is None:
        assert out.p_value is None
    else:
        assert out.p_value == pytest.approx(p, rel=1e-12)


def test_sign_test_symmetry():
    d = np.array([0.5, 0.25, 0.25, -0.125, 0.0, 0.75, 0.5])
    assert sign_test(d).p_value == sign_test(-d).p_value


def test_sign_test_rejects_bad_input():
    with pytest.raises(ValueError, match="not finite"):
        sign_test([0.1, np.nan])
    with pytest.raises(ValueError, match="one difference per task"):
        sign_test([[0.1, 0.2]])
