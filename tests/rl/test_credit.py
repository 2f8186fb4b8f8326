"""Credit arms, scale and utility (METHOD §3): the properties METHOD says tests must pin."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from editcredit.rl import credit
from editcredit.rl.credit import (
    ARM_QUERIES_CF,
    CREDIT_ARMS,
    CreditInput,
    CreditQuery,
    add_credit,
    arm_credit,
    get_arm,
    query_decision,
    register_arm,
    scale,
    utility,
)

LAM, C = 0.1, 1.0
TOL = 1e-12

#: METHOD §3's utility weights, which the expected U values below are computed with.
WEIGHTS = (0.25, 0.25)


def make_input(
    L: int, m: int, D: float | None = 0.5, A: float = 0.0, lam: float = LAM, c: float = C
) -> CreditInput:
    """A trajectory of L valid tokens interleaved with invalid (prompt/observation) tokens.

    The m credited tokens sit in the middle of the valid tokens, so credit on the wrong tokens or
    on invalid tokens shows up.
    """
    valid = np.zeros(2 * L + 3, dtype=bool)
    valid_idx = np.arange(1, 2 * L + 1, 2)  # every other token from 1 is a generated token
    valid[valid_idx] = True
    credited = np.zeros_like(valid)
    start = (L - m) // 2
    credited[valid_idx[start : start + m]] = True
    return CreditInput(valid=valid, credited=credited, D=D, A=A, lam=lam, c=c)


# --- utility -------------------------------------------------------------------------------

UTILITY_ROWS = [
    pytest.param(1, 1.0, 0, 1.25, id="resolved-all-f2p"),
    pytest.param(0, 0.0, 1, -0.25, id="nothing-and-regressed"),
    pytest.param(0, 0.5, 0, 0.125, id="half-f2p"),
    pytest.param(1, 1.0, 1, 1.0, id="resolved-with-regression"),
    pytest.param(0, 0.0, 0, 0.0, id="zero"),
]


@pytest.mark.parametrize(("Y", "F", "G", "expected"), UTILITY_ROWS)
def test_utility_rows(Y, F, G, expected):
    assert utility(Y, F, G, *WEIGHTS) == pytest.approx(expected, abs=TOL)


def test_utility_weights_are_parameters():
    assert utility(0, 0.5, 1, f_weight=1.0, g_weight=2.0) == pytest.approx(-1.5, abs=TOL)


@pytest.mark.parametrize(
    ("Y", "F", "G"),
    [
        pytest.param(0.5, 0.0, 0, id="Y-not-binary"),
        pytest.param(0, 1.5, 0, id="F-above-1"),
        pytest.param(0, -0.1, 0, id="F-negative"),
        pytest.param(0, 0.0, 2, id="G-not-binary"),
        pytest.param(float("nan"), 0.0, 0, id="Y-nan"),
    ],
)
def test_utility_rejects_bad_reports(Y, F, G):
    with pytest.raises(ValueError):
        utility(Y, F, G, *WEIGHTS)


# --- scale ---------------------------------------------------------------------------------

SCALE_ROWS = [
    pytest.param(0.5, 10, 100, LAM, C, 1.0, id="capped-at-1"),
    pytest.param(-2.0, 1, 200, LAM, C, 1 / 40, id="negative-D-s-lt-1"),
    pytest.param(1.0, 2, 50, LAM, C, 0.4, id="s-lt-1"),
    pytest.param(0.0, 1, 200, LAM, C, 1.0, id="D-zero"),
    pytest.param(1.25, 3, 1000, 0.2, 0.5, 0.006, id="other-lam-c"),
]


@pytest.mark.parametrize(("D", "m", "L", "lam", "c", "expected"), SCALE_ROWS)
def test_scale_rows(D, m, L, lam, c, expected):
    assert scale(D, m, L, lam, c) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize(
    ("m", "L"),
    [
        pytest.param(0, 10, id="m-zero"),
        pytest.param(1, 0, id="L-zero"),
        pytest.param(11, 10, id="m-above-L"),
        pytest.param(1.5, 10, id="m-not-integer"),
    ],
)
def test_scale_validates_m_and_L(m, L):
    with pytest.raises(ValueError):
        scale(0.5, m, L, LAM, C)


# --- registry ------------------------------------------------------------------------------


def test_registry_holds_the_four_arms():
    assert set(CREDIT_ARMS) == {"O", "B", "M", "E"}
    assert ARM_QUERIES_CF == {"O": False, "B": True, "M": True, "E": False}


def test_unknown_arm_raises_naming_it():
    with pytest.raises(KeyError, match="'Z'"):
        get_arm("Z")
    with pytest.raises(KeyError, match="unknown credit arm 'nope'"):
        arm_credit("nope", make_input(10, 2))


def test_new_arm_is_one_registered_function(monkeypatch):
    monkeypatch.setattr(credit, "CREDIT_ARMS", dict(CREDIT_ARMS))
    monkeypatch.setattr(credit, "ARM_QUERIES_CF", dict(ARM_QUERIES_CF))

    @register_arm("X")
    def arm_x(inp: CreditInput) -> np.ndarray:
        return inp.valid.astype(np.float64)

    inp = make_input(5, 1)
    assert np.array_equal(arm_credit("X", inp), inp.valid.astype(np.float64))
    assert credit.ARM_QUERIES_CF["X"] is False
    with pytest.raises(ValueError, match="already registered"):
        register_arm("X")(arm_x)


# --- hand-computed rows --------------------------------------------------------------------

# lam=0.1, c=1, D=0.5, L=100, m=10: s = min(1, 10 / (0.1*0.5*100)) = 1.
# B = 0.1*0.5*1 = 0.05 per valid token; M = 0.05*100/10 = 0.5 per credited token.
# E with A=0.5: clip(0.1*0.5*100/10, -1, 1) = 0.5 per credited token.
HAND_ROWS = [
    pytest.param("O", 0.0, 0.0, id="O"),
    pytest.param("B", 0.05, 0.05, id="B"),
    pytest.param("M", 0.0, 0.5, id="M"),
    pytest.param("E", 0.0, 0.5, id="E"),
]


@pytest.mark.parametrize(("arm", "per_uncredited_valid", "per_credited"), HAND_ROWS)
def test_hand_computed_row(arm, per_uncredited_valid, per_credited):
    inp = make_input(100, 10, D=0.5, A=0.5)
    aux = arm_credit(arm, inp)
    assert aux.dtype == np.float64
    assert np.all(aux[~inp.valid] == 0.0)
    assert np.allclose(aux[inp.credited], per_credited, rtol=0, atol=TOL)
    assert np.allclose(aux[inp.valid & ~inp.credited], per_uncredited_valid, rtol=0, atol=TOL)


# --- B and M: equal signed and L1 mass, different L2 mass ----------------------------------

MASS_ROWS = [
    pytest.param(0.5, 10, 100, LAM, C, id="D+-s=1"),
    pytest.param(-0.25, 10, 10, LAM, C, id="D--m=L-s=1"),
    pytest.param(-2.0, 1, 200, LAM, C, id="D--s<1"),
    pytest.param(1.0, 2, 50, LAM, C, id="D+-s<1"),
    pytest.param(-1.25, 3, 1000, 0.2, 0.5, id="D--s<1-other-lam-c"),
    pytest.param(0.75, 1, 1, LAM, C, id="single-token"),
]


@pytest.mark.parametrize(("D", "m", "L", "lam", "c"), MASS_ROWS)
def test_b_and_m_carry_equal_signed_and_l1_mass(D, m, L, lam, c):
    inp = make_input(L, m, D=D, lam=lam, c=c)
    b, mm = arm_credit("B", inp), arm_credit("M", inp)
    expected = lam * D * scale(D, m, L, lam, c) * L
    assert b.sum() == pytest.approx(expected, rel=1e-12, abs=TOL)
    assert mm.sum() == pytest.approx(expected, rel=1e-12, abs=TOL)
    assert np.abs(b).sum() == pytest.approx(abs(expected), rel=1e-12, abs=TOL)
    assert np.abs(mm).sum() == pytest.approx(abs(expected), rel=1e-12, abs=TOL)
    assert np.all(np.sign(mm[inp.credited]) == np.sign(D))
    assert np.all(mm[~inp.credited] == 0.0)
    assert np.all(b[~inp.valid] == 0.0)


def test_mass_rows_cover_both_regimes_of_s():
    values = [scale(*p.values[:5]) for p in MASS_ROWS]
    assert any(v < 1.0 for v in values) and any(v == 1.0 for v in values)
    assert any(p.values[0] < 0 for p in MASS_ROWS)


@pytest.mark.parametrize(
    ("D", "m", "L"),
    [
        pytest.param(0.5, 10, 100, id="s=1"),
        pytest.param(-2.0, 1, 200, id="s<1"),
        pytest.param(1.0, 49, 50, id="m=L-1"),
    ],
)
def test_l2_mass_differs_when_m_below_L(D, m, L):
    inp = make_input(L, m, D=D)
    b, mm = arm_credit("B", inp), arm_credit("M", inp)
    assert np.linalg.norm(mm) > np.linalg.norm(b) * (1 + 1e-9)


def test_l2_mass_equal_when_m_equals_L():
    inp = make_input(20, 20, D=0.3)
    assert np.allclose(arm_credit("B", inp), arm_credit("M", inp), rtol=0, atol=TOL)


GRID_D = [-2.0, -1.25, -0.5, -0.01, 0.0, 0.01, 0.5, 1.25, 2.0]


@pytest.mark.parametrize(("lam", "c"), [(LAM, C), (0.5, 0.3)], ids=["default", "lam0.5-c0.3"])
@pytest.mark.parametrize("D", GRID_D, ids=[f"D={d}" for d in GRID_D])
def test_m_per_token_credit_never_exceeds_c(D, lam, c):
    worst = 0.0
    for L in range(1, 201):
        for m in range(1, L + 1):
            worst = max(worst, abs(lam * D * scale(D, m, L, lam, c) * L / m))
    assert worst <= c * (1 + 1e-12)


@pytest.mark.parametrize("D", [-2.0, -0.3, 0.3, 2.0])
@pytest.mark.parametrize("L", [1, 2, 7, 50, 200])
def test_m_arm_output_bounded_by_c(D, L):
    for m in range(1, L + 1):
        aux = arm_credit("M", make_input(L, m, D=D))
        assert np.abs(aux).max() <= C * (1 + 1e-12)


# --- D = 0, unavailable and no block -------------------------------------------------------


@pytest.mark.parametrize("arm", ["B", "M"])
def test_zero_D_gives_s_one_and_no_credit(arm):
    assert scale(0.0, 3, 40, LAM, C) == 1.0
    assert np.all(arm_credit(arm, make_input(40, 3, D=0.0)) == 0.0)


@pytest.mark.parametrize("arm", ["B", "M"])
def test_unavailable_D_gives_zeros(arm):
    assert np.all(arm_credit(arm, make_input(40, 3, D=None)) == 0.0)


@pytest.mark.parametrize("arm", ["O", "B", "M", "E"])
def test_no_selected_block_gives_zeros(arm):
    assert np.all(arm_credit(arm, make_input(40, 0, D=0.5, A=1.0)) == 0.0)


@pytest.mark.parametrize("D", [None, -1.0, 0.0, 1.25])
@pytest.mark.parametrize("A", [-1.0, 0.0, 0.875])
def test_o_adds_nothing(D, A):
    inp = make_input(30, 4, D=D, A=A)
    aux = arm_credit("O", inp)
    adv = np.full(inp.valid.shape, A)
    assert np.all(aux == 0.0)
    assert np.array_equal(add_credit(adv, aux), adv)


# --- E -------------------------------------------------------------------------------------

E_ROWS = [
    pytest.param(0.5, 100, 10, 0.5, id="unclipped"),
    pytest.param(2.0, 100, 10, 1.0, id="clip-at-plus-c"),
    pytest.param(-2.0, 100, 10, -1.0, id="clip-at-minus-c"),
    pytest.param(-0.125, 40, 20, -0.025, id="unclipped-negative"),
    pytest.param(0.0, 40, 20, 0.0, id="zero-advantage"),
]


@pytest.mark.parametrize(("A", "L", "m", "expected"), E_ROWS)
def test_e_clip(A, L, m, expected):
    inp = make_input(L, m, D=None, A=A)
    aux = arm_credit("E", inp)
    assert np.allclose(aux[inp.credited], expected, rtol=0, atol=TOL)
    assert np.all(aux[~inp.credited] == 0.0)


def test_e_ignores_D():
    a = arm_credit("E", make_input(50, 5, D=None, A=0.3))
    b = arm_credit("E", make_input(50, 5, D=-1.0, A=0.3))
    assert np.array_equal(a, b)


# --- add_credit ----------------------------------------------------------------------------


def test_add_credit_leaves_rewards_and_advantages_unchanged():
    assert "rewards" not in inspect.signature(add_credit).parameters
    rewards = np.array([1.0, 0.0, 1.0, -0.5])
    rewards_before = rewards.copy()
    adv_scalar = rewards - rewards.mean()
    inp = make_input(8, 2, D=0.5)
    adv = np.full(inp.valid.shape, adv_scalar[0])
    adv_before = adv.copy()
    aux = arm_credit("M", inp)
    out = add_credit(adv, aux)
    assert np.array_equal(rewards, rewards_before)
    assert np.array_equal(adv, adv_before)
    assert np.allclose(out, adv_before + aux, rtol=0, atol=TOL)
    assert out.dtype == np.float64


def test_add_credit_rejects_shape_mismatch():
    with pytest.raises(ValueError):
        add_credit(np.zeros(3), np.zeros(4))


# --- CreditInput validation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("valid", "credited"),
    [
        pytest.param([1, 1, 0], [0, 1, 0], id="non-bool"),
        pytest.param([True, True], [True, False, False], id="shape-mismatch"),
        pytest.param([True, False, True], [False, True, False], id="credited-outside-valid"),
    ],
)
def test_credit_input_validation(valid, credited):
    with pytest.raises((TypeError, ValueError)):
        CreditInput(valid=np.array(valid), credited=np.array(credited), D=0.1, A=0, lam=LAM, c=C)


# --- query_decision ------------------------------------------------------------------------


def test_query_decision_is_deterministic():
    keys = [f"run0/step{i}/task{i % 7}/sample{i % 8}" for i in range(200)]
    first = [query_decision(k, 0.5) for k in keys]
    assert first == [query_decision(k, 0.5) for k in keys]
    assert 0 < sum(first) < len(keys)


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3, 0.5, 0.9, 1.0])
def test_query_decision_rate_is_honoured(rate):
    n = 10_000
    hits = sum(
        query_decision(f"run/step{i // 128}/task{i % 16}/sample{i % 8}/{i}", rate) for i in range(n)
    )
    if rate in (0.0, 1.0):
        assert hits == rate * n
    else:
        assert abs(hits - rate * n) <= 4 * np.sqrt(n * rate * (1 - rate))


def test_query_decision_rejects_bad_rate():
    with pytest.raises(ValueError):
        query_decision("k", 1.5)


# --- CreditQuery ---------------------------------------------------------------------------


def test_credit_query_row_round_trips_to_json():
    row = CreditQuery("run/1/t/0", 2, 0.25, 1.0, 10, 100, True, "")
    d = row.to_dict()
    assert d == {
        "rollout_key": "run/1/t/0",
        "selected_block": 2,
        "D": 0.25,
        "s": 1.0,
        "m": 10,
        "L": 100,
        "available": True,
        "reason": "",
    }
    assert json.loads(json.dumps(d)) == d
    off = CreditQuery("run/1/t/1", None, None, None, 0, 80, False, "no eligible block")
    assert off.to_dict()["reason"] == "no eligible block"


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param(dict(D=0.1, available=False, reason="x"), id="unavailable-with-D"),
        pytest.param(dict(D=None, available=False, reason=""), id="unavailable-without-reason"),
        pytest.param(dict(D=0.1, available=True, reason="x"), id="available-with-reason"),
        pytest.param(dict(D=None, available=True, reason=""), id="available-without-D"),
    ],
)
def test_credit_query_consistency(kwargs):
    with pytest.raises(ValueError):
        CreditQuery(rollout_key="k", selected_block=0, s=None, m=1, L=2, **kwargs)
