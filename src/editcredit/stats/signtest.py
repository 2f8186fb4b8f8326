"""Wins, losses and ties per task, and the two-sided sign test over non-tied tasks (METHOD §9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from editcredit.stats._records import record_to_dict
from editcredit.stats.records import SignRecord

__all__ = ["SignTest", "sign_test"]


@dataclass(frozen=True)
class SignTest:
    """Per-task wins/losses/ties of A over B and the exact two-sided sign test.

    Attributes:
        wins: tasks whose difference is > 0.
        losses: tasks whose difference is < 0.
        ties: tasks whose difference is exactly 0.
        n_nontied: ``wins + losses``, the trials of the test.
        p_value: two-sided exact binomial p-value of ``wins`` out of ``n_nontied`` at 1/2;
            ``None`` when every task is tied (there is nothing to test).
    """

    wins: int
    losses: int
    ties: int
    n_nontied: int
    p_value: float | None

    def to_dict(self) -> SignRecord:
        """JSON-ready dict of the fields."""
        return cast(SignRecord, record_to_dict(self))


def sign_test(task_differences: ArrayLike) -> SignTest:
    """Count wins/losses/ties of per-task differences and sign-test the non-tied ones.

    A task's difference is its A - B score difference averaged over the paired seeds; a tie is
    an exact 0 (task scores are multiples of 1/n, so equal scores give an exact 0). The p-value
    is ``scipy.stats.binomtest(wins, wins + losses, 0.5, alternative="two-sided")``.
    """
    # imported here: scipy.stats takes most of a second to import, and most of the jobs that
    # import editcredit.stats never sign-test
    from scipy.stats import binomtest

    d = np.asarray(task_differences, dtype=np.float64)
    if d.ndim != 1:
        raise ValueError(f"expected one difference per task, got shape {d.shape}")
    bad = np.flatnonzero(~np.isfinite(d))
    if bad.size:
        raise ValueError(f"task difference {bad[0]} is not finite: {d[bad[0]]}")
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    n = wins + losses
    p_value = float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue) if n else None
    return SignTest(wins=wins, losses=losses, ties=int(d.size) - n, n_nontied=n, p_value=p_value)
