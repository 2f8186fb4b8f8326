"""The names that cross the seams between packages, each defined once (METHOD §3, §9).

- :class:`Arm`: the four credit arms. The credit registry (``rl.credit.CREDIT_ARMS``) registers
  one function per member, ``rl.config.ARMS`` and the run-name constraint of
  :mod:`editcredit.layout` are built from it.
- :class:`ControlArm`: the credit controls, outside the pre-registered comparison (METHOD §3,
  "Controls of the credit"): registered beside the arms (``rl.credit.CONTROL_ARMS``), never in
  :data:`ARM_NAMES`, the training config's arms or the run names.
- :class:`CreditReason`: why a credit-ledger row holds no credit (``''`` when it does). The
  rollout worker and the step's ledger write these; the statistics read them back.

Both are ``StrEnum``: a member *is* its string (``Arm.M == "M"``, ``f"{Arm.M}"`` is ``"M"``), so
JSON and Parquet hold the same bytes as the plain strings. The writers still put ``.value``
(a plain ``str``) into records, so a record never carries an enum type across a process or into
a DataFrame. Standard library only: every package may import it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ARM_NAMES", "CONTROL_ARM_NAMES", "Arm", "ControlArm", "CreditReason"]


class Arm(StrEnum):
    """A credit arm (METHOD §3): the auxiliary term added to a trajectory's token advantages."""

    O = "O"  # noqa: E741 (METHOD's name) outcome only: no auxiliary term
    B = "B"  # λ*D*s on every valid generated token (counterfactual query)
    M = "M"  # λ*D*s*L/m on the selected block's turns (counterfactual query)
    E = "E"  # clip(λ*A*L/m, -c, c) on the selected block's turns (no query)


#: The arm names in METHOD's order, as plain strings.
ARM_NAMES: tuple[str, ...] = tuple(arm.value for arm in Arm)


class ControlArm(StrEnum):
    """A control of the credit (METHOD §3): an arm outside the pre-registered comparison."""

    T = "T"  # the known per-block truth as M's credit on every eligible block's turns (no query)


#: The control arms' names, as plain strings.
CONTROL_ARM_NAMES: tuple[str, ...] = tuple(arm.value for arm in ControlArm)


class CreditReason(StrEnum):
    """The ``reason`` of a credit-ledger row: why the query gave no credit."""

    NONE = ""  # the query is available: D was computed
    NO_ELIGIBLE_BLOCK = "no eligible block"  # the trajectory has no block to credit
    ORIGINAL_UNAVAILABLE = "original report unavailable"  # the final patch's grading failed
    COUNTERFACTUAL_UNAVAILABLE = "counterfactual report unavailable"  # the CF grading failed
    NOT_QUERIED = "not queried (rate)"  # the query rate p did not send it: not a query
