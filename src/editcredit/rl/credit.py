"""Utility, counterfactual credit and the four arms (METHOD §3).

Pure functions, numpy float64 throughout; no I/O and no config reads. Every METHOD default
(the utility weights 0.25, ``λ`` = 0.1, ``c`` = 1, the query rate ``p`` = 1) lives in
``config/config.yaml`` and reaches these functions as an argument; the keyword defaults below
only mirror METHOD for tests and interactive use.

- :func:`utility` (defined in :mod:`editcredit.grading.utility`, the one place U is computed):
  ``U = Y + 0.25*F - 0.25*G``; the credit signal is ``D = U(original) - U(counterfactual)``.
- :func:`scale`: ``s = min(1, c*m / (λ*|D|*L))``, ``s = 1`` when ``D = 0``.
- :data:`CREDIT_ARMS`: the arm registry, one function per :class:`~editcredit.records.Arm`
  (O, B, M, E). A new arm is one function decorated with
  :func:`register_arm`; it maps a :class:`CreditInput` to the per-token auxiliary term.
- :data:`CONTROL_ARMS`: the controls of the credit, one function per
  :class:`~editcredit.records.ControlArm` (T: the known per-block truth as credit), registered
  with ``register_arm(..., control=True)`` apart from the pre-registered arms; :func:`get_arm`,
  :func:`arm_credit` and :func:`queries_cf` find both, :func:`reads_truth` says which read the
  known truth (``CreditInput.truth``, which the rollout worker then computes).
- :func:`add_credit`: credit is added to the group-centred token advantages, never to the
  terminal reward or the returns.
- :func:`query_decision`: the score-blind, deterministic decision whether to run the
  counterfactual query (rate ``p``).
- :class:`CreditQuery`: one credit-ledger row per query.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from editcredit.grading.utility import utility
from editcredit.records import Arm, ControlArm

__all__ = [
    "CREDIT_ARMS",
    "ARM_QUERIES_CF",
    "CONTROL_ARMS",
    "CONTROL_QUERIES_CF",
    "CreditInput",
    "CreditQuery",
    "add_credit",
    "arm_credit",
    "get_arm",
    "query_decision",
    "queries_cf",
    "reads_truth",
    "register_arm",
    "scale",
    "utility",
]

ArmFn = Callable[["CreditInput"], np.ndarray]

#: Arm name -> function mapping a :class:`CreditInput` to the auxiliary term per token.
CREDIT_ARMS: dict[str, ArmFn] = {}
#: Arm name -> whether the arm needs the counterfactual query (METHOD §3, column "CF query").
ARM_QUERIES_CF: dict[str, bool] = {}
#: Control name -> function: the controls of the credit, outside the pre-registered comparison
#: (METHOD §3, "Controls of the credit"); never among :data:`CREDIT_ARMS`.
CONTROL_ARMS: dict[str, ArmFn] = {}
#: Control name -> whether it needs the counterfactual query.
CONTROL_QUERIES_CF: dict[str, bool] = {}
#: The arms and controls whose credit reads the known truth per block (``CreditInput.truth``).
TRUTH_ARMS: frozenset[str] = frozenset({ControlArm.T.value})


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def scale(D: float, m: int, L: int, lam: float, c: float) -> float:
    """Credit scale ``s = min(1, c*m / (λ*|D|*L))``; ``s = 1`` when ``D = 0`` (METHOD §3).

    ``m`` = number of credited tokens, ``L`` = number of valid generated tokens; ``1 <= m <= L``.
    The scale caps M's per-token credit ``λ*D*s*L/m`` at ``c`` in absolute value.
    """
    D, lam, c = _finite("D", D), _finite("lam", lam), _finite("c", c)
    if int(m) != m or int(L) != L:
        raise ValueError(f"m and L must be integers, got m={m!r}, L={L!r}")
    m, L = int(m), int(L)
    if L < 1:
        raise ValueError(f"L must be >= 1, got {L}")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    if m > L:
        raise ValueError(f"m must be <= L, got m={m}, L={L}")
    if lam < 0:
        raise ValueError(f"lam must be >= 0, got {lam}")
    if c <= 0:
        raise ValueError(f"c must be > 0, got {c}")
    denom = lam * abs(D) * L
    if denom == 0.0:
        return 1.0
    return float(min(1.0, c * m / denom))


@dataclass(frozen=True, eq=False)
class CreditInput:
    """Common input of every arm: one trajectory's token masks and its credit signal.

    - ``valid``: bool [T], the trajectory's valid generated tokens (the loss mask); ``L`` is its
      sum.
    - ``credited``: bool [T], tokens of the complete assistant turns that produced the selected
      block, a subset of ``valid``; all False when no block was selected. ``m`` is its sum.
    - ``D``: ``U(original) - U(counterfactual)``, or None when no query was made or it is
      unavailable.
    - ``A``: the terminal group advantage of the trajectory before credit (used by arm E).
    - ``lam``, ``c``: METHOD's ``λ`` and ``c``.
    - ``truth``: float [T] or None, the known truth of the block each token's turn belongs to
      (``data.block_truth``: +1 fix, -1 harmful, 0 other or outside every eligible block),
      zero outside ``valid``; only the truth control (T) reads it.
    """

    valid: np.ndarray
    credited: np.ndarray
    D: float | None
    A: float
    lam: float
    c: float
    truth: np.ndarray | None = None
    L: int = field(init=False)
    m: int = field(init=False)

    def __post_init__(self) -> None:
        valid = np.asarray(self.valid)
        credited = np.asarray(self.credited)
        for name, arr in (("valid", valid), ("credited", credited)):
            if arr.dtype != np.bool_:
                raise TypeError(f"{name} must be a bool array, got dtype {arr.dtype}")
            if arr.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
        if valid.shape != credited.shape:
            raise ValueError(f"valid {valid.shape} and credited {credited.shape} differ in shape")
        if np.any(credited & ~valid):
            raise ValueError("credited tokens must be a subset of the valid tokens")
        D = None if self.D is None else _finite("D", self.D)
        lam, c = _finite("lam", self.lam), _finite("c", self.c)
        if lam < 0:
            raise ValueError(f"lam must be >= 0, got {lam}")
        if c <= 0:
            raise ValueError(f"c must be > 0, got {c}")
        if self.truth is not None:
            truth = np.asarray(self.truth, dtype=np.float64)
            if truth.shape != valid.shape:
                raise ValueError(f"truth {truth.shape} and valid {valid.shape} differ in shape")
            if not np.all(np.isin(truth, (-1.0, 0.0, 1.0))):
                raise ValueError("truth must hold -1, 0 or +1 per token")
            if np.any(truth[~valid] != 0.0):
                raise ValueError("truth must be zero outside the valid tokens")
            object.__setattr__(self, "truth", truth)
        object.__setattr__(self, "valid", valid)
        object.__setattr__(self, "credited", credited)
        object.__setattr__(self, "D", D)
        object.__setattr__(self, "A", _finite("A", self.A))
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "L", int(valid.sum()))
        object.__setattr__(self, "m", int(credited.sum()))

    def zeros(self) -> np.ndarray:
        """A float64 zero term of the trajectory's length."""
        return np.zeros(self.valid.shape, dtype=np.float64)


def register_arm(
    name: str, *, queries_cf: bool = False, control: bool = False
) -> Callable[[ArmFn], ArmFn]:
    """Decorator registering an arm function under ``name`` in :data:`CREDIT_ARMS` (with
    ``control``: in :data:`CONTROL_ARMS`, outside the pre-registered comparison).

    ``queries_cf`` records whether the arm needs the counterfactual query (default False).
    Registering a name twice, in either registry, is an error.
    """

    def decorate(fn: ArmFn) -> ArmFn:
        key = str(name)  # an Arm member registers under its plain name
        if key in CREDIT_ARMS or key in CONTROL_ARMS:
            raise ValueError(f"credit arm {key!r} is already registered")
        (CONTROL_ARMS if control else CREDIT_ARMS)[key] = fn
        (CONTROL_QUERIES_CF if control else ARM_QUERIES_CF)[key] = queries_cf
        return fn

    return decorate


def get_arm(name: str) -> ArmFn:
    """The registered arm (or control) function ``name``; an unknown name raises ``KeyError``
    naming it."""
    if name in CREDIT_ARMS:
        return CREDIT_ARMS[name]
    if name in CONTROL_ARMS:
        return CONTROL_ARMS[name]
    known = ", ".join(sorted(CREDIT_ARMS) + sorted(CONTROL_ARMS))
    raise KeyError(f"unknown credit arm {name!r} (registered: {known})")


def queries_cf(name: str) -> bool:
    """Whether the arm or control ``name`` needs the counterfactual query; an unknown name
    raises ``KeyError`` naming it."""
    get_arm(name)
    return (ARM_QUERIES_CF if name in ARM_QUERIES_CF else CONTROL_QUERIES_CF)[name]


def reads_truth(name: str) -> bool:
    """Whether the credit of the arm or control ``name`` reads the known truth per block, which
    its rollouts then carry (only T); an unknown name raises ``KeyError`` naming it."""
    get_arm(name)
    return name in TRUTH_ARMS


def arm_credit(name: str, inp: CreditInput) -> np.ndarray:
    """Auxiliary term per token of arm ``name``: float64 [T], zero outside the valid tokens."""
    aux = np.asarray(get_arm(name)(inp), dtype=np.float64)
    if aux.shape != inp.valid.shape:
        raise ValueError(f"arm {name!r} returned shape {aux.shape}, expected {inp.valid.shape}")
    if np.any(aux[~inp.valid] != 0.0):
        raise ValueError(f"arm {name!r} put credit outside the valid tokens")
    return aux


@register_arm(Arm.O, queries_cf=False)
def arm_o(inp: CreditInput) -> np.ndarray:
    """Arm O: no auxiliary credit."""
    return inp.zeros()


@register_arm(Arm.B, queries_cf=True)
def arm_b(inp: CreditInput) -> np.ndarray:
    """Arm B: ``λ*D*s`` on every valid token; zeros without a selected block or without ``D``."""
    aux = inp.zeros()
    if inp.D is None or inp.m == 0:
        return aux
    s = scale(inp.D, inp.m, inp.L, inp.lam, inp.c)
    aux[inp.valid] = inp.lam * inp.D * s
    return aux


@register_arm(Arm.M, queries_cf=True)
def arm_m(inp: CreditInput) -> np.ndarray:
    """Arm M: ``λ*D*s*L/m`` on the credited tokens; zeros without a selected block or ``D``.

    Carries the same signed and L1 mass as B (``λ*D*s*L``), concentrated on the block's turns;
    ``|λ*D*s*L/m| <= c`` by construction of ``s``.
    """
    aux = inp.zeros()
    if inp.D is None or inp.m == 0:
        return aux
    s = scale(inp.D, inp.m, inp.L, inp.lam, inp.c)
    aux[inp.credited] = inp.lam * inp.D * s * inp.L / inp.m
    return aux


@register_arm(Arm.E, queries_cf=False)
def arm_e(inp: CreditInput) -> np.ndarray:
    """Arm E: ``clip(λ*A*L/m, -c, c)`` on the credited tokens; no counterfactual (``D`` unused)."""
    aux = inp.zeros()
    if inp.m == 0:
        return aux
    aux[inp.credited] = float(np.clip(inp.lam * inp.A * inp.L / inp.m, -inp.c, inp.c))
    return aux


@register_arm(ControlArm.T, queries_cf=False, control=True)
def arm_t(inp: CreditInput) -> np.ndarray:
    """Control T: M's credit with the known truth for ``D`` on every eligible block's turns.

    ``λ*s*L/m_T*τ`` per token, ``τ`` = ``inp.truth`` (+1 on a fixing block's turns, -1 on a
    harmful one's, 0 elsewhere), ``m_T`` = the tokens with ``τ != 0``, ``s = scale(1, m_T, L,
    λ, c)``: the L1 mass ``λ*s*L`` of M at ``|D| = 1`` and ``|credit| <= c`` per token. Zeros
    without truth or where no block is labelled fix or harmful. No counterfactual query.
    """
    aux = inp.zeros()
    if inp.truth is None:
        return aux
    labelled = inp.truth != 0.0
    m_t = int(labelled.sum())
    if m_t == 0:
        return aux
    s = scale(1.0, m_t, inp.L, inp.lam, inp.c)
    aux[labelled] = inp.lam * s * inp.L / m_t * inp.truth[labelled]
    return aux


def add_credit(advantages: np.ndarray, aux: np.ndarray) -> np.ndarray:
    """Token advantages with credit: ``advantages + aux`` as a new float64 array.

    ``advantages`` are the group-centred token advantages (terminal reward minus the group mean,
    METHOD §4). Credit enters only here: it never changes the terminal reward nor the returns,
    which is why this function takes no rewards. Inputs are not modified; shapes must match.
    """
    adv = np.asarray(advantages, dtype=np.float64)
    aux = np.asarray(aux, dtype=np.float64)
    if adv.shape != aux.shape:
        raise ValueError(f"advantages {adv.shape} and aux {aux.shape} differ in shape")
    return adv + aux


def query_decision(rollout_key: str, rate: float) -> bool:
    """Whether to run the counterfactual query for ``rollout_key``, with probability ``rate``.

    Deterministic and score-blind: ``u`` = the first 8 bytes of ``sha256(rollout_key)`` as an
    unsigned integer over ``2**64`` (uniform in [0, 1)); query iff ``u < rate``. ``rate = 1``
    always queries, ``rate = 0`` never does.
    """
    rate = _finite("rate", rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must lie in [0, 1], got {rate}")
    digest = hashlib.sha256(rollout_key.encode("utf-8")).digest()
    u = int.from_bytes(digest[:8], "big") / 2.0**64
    return u < rate


@dataclass(frozen=True)
class CreditQuery:
    """One credit-ledger row: the outcome of one trajectory's counterfactual credit query.

    ``available`` is False when no credit could be computed; ``reason`` then says why (a
    :class:`~editcredit.records.CreditReason`) and is ``''`` otherwise.
    ``D`` is None whenever the query is unavailable.
    """

    rollout_key: str
    selected_block: int | None
    D: float | None
    s: float | None
    m: int
    L: int
    available: bool
    reason: str = ""

    def __post_init__(self) -> None:
        if self.available and self.reason:
            raise ValueError(f"an available query has no reason, got {self.reason!r}")
        if not self.available and not self.reason:
            raise ValueError("an unavailable query must say why (reason)")
        if self.available and (self.D is None or self.selected_block is None):
            raise ValueError("an available query needs a selected block and D")
        if not self.available and self.D is not None:
            raise ValueError("an unavailable query carries no D")

    def to_dict(self) -> dict[str, Any]:
        """The ledger row as a plain dict (JSON-serialisable)."""
        return asdict(self)
