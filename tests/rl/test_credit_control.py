"""The truth control T (METHOD §3, "Controls of the credit"): M's credit with the known per-block
truth for D on every eligible block's turns; registered apart from the pre-registered arms."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.records import ARM_NAMES, CONTROL_ARM_NAMES, ControlArm
from editcredit.rl import config as rl_config
from editcredit.rl import credit
from editcredit.rl.credit import (
    ARM_QUERIES_CF,
    CONTROL_ARMS,
    CONTROL_QUERIES_CF,
    CREDIT_ARMS,
    CreditInput,
    arm_credit,
    arm_t,
    get_arm,
    register_arm,
    scale,
)

LAM, C = 0.1, 1.0
TOL = 1e-12


def make_input(
    L: int, plus: int, minus: int = 0, truth: bool = True, D: float | None = 0.5, A: float = 0.3
) -> CreditInput:
    """L valid tokens interleaved with invalid ones; ``plus`` tokens of fixing turns (+1) then
    ``minus`` tokens of harmful turns (-1) among the valid ones, the rest 0."""
    valid = np.zeros(2 * L + 3, dtype=bool)
    valid_idx = np.arange(1, 2 * L + 1, 2)
    valid[valid_idx] = True
    tau = np.zeros(valid.shape, dtype=np.float64)
    tau[valid_idx[:plus]] = 1.0
    tau[valid_idx[plus : plus + minus]] = -1.0
    credited = np.zeros_like(valid)
    credited[valid_idx[: max(plus, 1)]] = True  # the selected block: M's and E's tokens
    return CreditInput(
        valid=valid, credited=credited, D=D, A=A, lam=LAM, c=C, truth=tau if truth else None
    )


def test_the_control_is_registered_apart_from_the_arms():
    assert CONTROL_ARM_NAMES == ("T",) and ControlArm.T == "T"
    assert not set(CONTROL_ARM_NAMES) & set(ARM_NAMES)
    assert CONTROL_ARMS == {"T": arm_t} and CONTROL_QUERIES_CF == {"T": False}
    assert "T" not in CREDIT_ARMS and "T" not in ARM_QUERIES_CF
    assert get_arm("T") is arm_t
    assert "T" not in rl_config.ARMS  # the training config runs the pre-registered arms only


def test_a_control_name_is_registered_once_across_both_registries(monkeypatch):
    monkeypatch.setattr(credit, "CREDIT_ARMS", dict(CREDIT_ARMS))
    monkeypatch.setattr(credit, "CONTROL_ARMS", dict(CONTROL_ARMS))
    monkeypatch.setattr(credit, "CONTROL_QUERIES_CF", dict(CONTROL_QUERIES_CF))

    @register_arm("Y", control=True)
    def arm_y(inp: CreditInput) -> np.ndarray:
        return inp.zeros()

    assert credit.CONTROL_ARMS["Y"] is arm_y and "Y" not in credit.CREDIT_ARMS
    for name in ("Y", "M", "T"):
        with pytest.raises(ValueError, match="already registered"):
            register_arm(name, control=True)(arm_y)
    with pytest.raises(ValueError, match="already registered"):
        register_arm("T")(arm_y)


# lam=0.1, c=1. plus+minus = m_T tokens; s = min(1, m_T / (0.1 * L)); per token 0.1*s*L/m_T.
HAND_ROWS = [
    pytest.param(100, 20, 0, 0.5, id="fix-s=1"),
    pytest.param(100, 10, 0, 1.0, id="fix-at-c"),
    pytest.param(100, 5, 0, 1.0, id="fix-s<1-capped-at-c"),
    pytest.param(100, 10, 10, 0.5, id="fix-and-harmful"),
    pytest.param(100, 0, 40, 0.25, id="harmful-only"),
    pytest.param(1, 1, 0, 0.1, id="single-token"),
]


@pytest.mark.parametrize(("L", "plus", "minus", "per_token"), HAND_ROWS)
def test_hand_computed_row(L, plus, minus, per_token):
    inp = make_input(L, plus, minus)
    aux = arm_credit("T", inp)
    assert aux.dtype == np.float64
    assert np.allclose(aux[inp.truth == 1.0], per_token, rtol=0, atol=TOL)
    assert np.allclose(aux[inp.truth == -1.0], -per_token, rtol=0, atol=TOL)
    assert np.all(aux[inp.truth == 0.0] == 0.0)
    s = scale(1.0, plus + minus, L, LAM, C)
    assert np.abs(aux).sum() == pytest.approx(LAM * s * L, rel=1e-12)
    assert np.abs(aux).max() <= C + TOL


@pytest.mark.parametrize(
    "inp",
    [
        pytest.param(make_input(50, 5, truth=False), id="no-truth"),
        pytest.param(make_input(50, 0, 0), id="every-block-other"),
    ],
)
def test_zero_without_a_labelled_block(inp):
    assert np.all(arm_credit("T", inp) == 0.0)


def test_the_control_reads_neither_d_nor_a():
    base = arm_credit("T", make_input(60, 6, 3))
    for D, A in ((None, 0.0), (-1.25, -0.5), (0.0, 2.0)):
        assert np.array_equal(arm_credit("T", make_input(60, 6, 3, D=D, A=A)), base)


@pytest.mark.parametrize("arm", ARM_NAMES)
def test_the_pre_registered_arms_ignore_the_truth(arm):
    with_truth = make_input(40, 4, 2)
    without = make_input(40, 4, 2, truth=False)
    assert np.array_equal(arm_credit(arm, with_truth), arm_credit(arm, without))


@pytest.mark.parametrize(
    ("truth", "error"),
    [
        pytest.param([0.0, 1.0, 0.0], "shape", id="shape"),
        pytest.param([0.0, 0.5, 0.0, 0.0], "-1, 0 or \\+1", id="not-a-label"),
        pytest.param([1.0, 1.0, 0.0, 0.0], "outside the valid tokens", id="on-a-prompt-token"),
    ],
)
def test_the_truth_is_checked(truth, error):
    valid = np.array([False, True, True, False])
    with pytest.raises(ValueError, match=error):
        CreditInput(
            valid=valid,
            credited=np.zeros(4, dtype=bool),
            D=None,
            A=0.0,
            lam=LAM,
            c=C,
            truth=np.array(truth),
        )


def test_credit_stays_within_c_on_random_trajectories():
    rng = np.random.default_rng(7)
    for _ in range(200):
        L = int(rng.integers(1, 300))
        plus = int(rng.integers(0, L + 1))
        minus = int(rng.integers(0, L - plus + 1))
        aux = arm_credit("T", make_input(L, plus, minus))
        assert np.abs(aux).max(initial=0.0) <= C + TOL
        if plus + minus:
            s = scale(1.0, plus + minus, L, LAM, C)
            assert np.abs(aux).sum() == pytest.approx(LAM * s * L, rel=1e-9)
