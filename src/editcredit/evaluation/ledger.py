"""The attempt ledger of one slot: pure decisions (METHOD §8).

A slot's attempts, in order, decide what happens next:

- no generation yet: ``generate``;
- the latest generation hit an infrastructure failure before a patch existed: ``regenerate``
  (a new attempt with a new seed) while fewer than ``limits.regenerate`` replacements were
  made, else the slot is unresolved (``infra_before_patch``);
- the latest generation produced a patch: ``grade`` it; the first valid report decides the
  slot (a verdict 0 or 1, or a null verdict: unresolved with the report's reason, never
  retried); a grading infrastructure failure gets ``regrade`` of the same patch while fewer
  than ``limits.regrade`` re-grades were made, else the slot is unresolved
  (``infra_after_patch``).

:func:`check_history` replays a history through :func:`next_step` and rejects any attempt the
ledger would not have asked for: an attempt after the slot was decided, a retry over the limit,
a grade of another attempt's patch. A journal that passes it never decided a slot twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

AttemptKind = Literal["generate", "regenerate", "grade", "regrade"]
Outcome = Literal["patch", "infra_failure", "report"]
Action = Literal["generate", "regenerate", "grade", "regrade", "final"]
State = Literal["pending", "decided", "unresolved"]

GENERATION_KINDS = ("generate", "regenerate")
GRADING_KINDS = ("grade", "regrade")

#: Reasons of an unresolved slot (slots.parquet ``reason``; scores count them).
INFRA_BEFORE_PATCH = "infra_before_patch"
INFRA_AFTER_PATCH = "infra_after_patch"
UNRESOLVED_VERDICT = "unresolved_verdict"


class LedgerError(ValueError):
    """An attempt history the ledger would never have produced."""


@dataclass(frozen=True)
class Limits:
    """Retries per slot: re-grades of the same patch, replacement generations (config
    ``evaluation.limits``, whose defaults are the schema's alone)."""

    regrade: int
    regenerate: int

    def __post_init__(self) -> None:
        if self.regrade < 0 or self.regenerate < 0:
            raise ValueError(f"retry limits must be >= 0, got {self}")


@dataclass(frozen=True)
class AttemptView:
    """What the ledger needs of one attempt.

    ``outcome``: ``patch`` (a generation ended with a final patch, possibly empty),
    ``infra_failure`` (generation or grading), or ``report`` (a grading produced a valid
    report). ``verdict`` is 1, 0 or None (the report's verdict is unresolved); ``verdict_kind``
    is the report's kind (valid_1, valid_0, empty_patch, patch_does_not_apply, unresolved).
    ``of`` is, for a grading, the index of the generation attempt whose patch it graded.
    """

    kind: AttemptKind
    outcome: Outcome
    verdict: int | None = None
    verdict_kind: str = ""
    of: int | None = None


@dataclass(frozen=True)
class Decision:
    """The next step of a slot, or its final state (``action == 'final'``).

    ``reason``: for a decided slot the verdict kind, for an unresolved one
    ``infra_before_patch``, ``infra_after_patch`` or ``unresolved_verdict``. ``of``: the
    generation attempt to grade (grade and regrade), or the attempt that decided the slot.
    """

    action: Action
    state: State = "pending"
    verdict: int | None = None
    reason: str = ""
    of: int | None = None

    @property
    def final(self) -> bool:
        return self.action == "final"


def next_step(attempts: Sequence[AttemptView], limits: Limits) -> Decision:
    """The next attempt a slot needs, or its final state. Pure; histories are trusted (see
    :func:`check_history`)."""
    gens = [i for i, a in enumerate(attempts) if a.kind in GENERATION_KINDS]
    if not gens:
        return Decision("generate")
    last = gens[-1]
    if attempts[last].outcome == "infra_failure":
        replaced = sum(a.kind == "regenerate" for a in attempts)
        if replaced < limits.regenerate:
            return Decision("regenerate")
        return Decision("final", "unresolved", None, INFRA_BEFORE_PATCH, last)
    gradings = [(i, a) for i, a in enumerate(attempts) if i > last]
    for i, a in gradings:
        if a.outcome == "report":  # the first valid report decides
            if a.verdict is None:
                return Decision("final", "unresolved", None, UNRESOLVED_VERDICT, i)
            return Decision("final", "decided", a.verdict, a.verdict_kind, i)
    if not gradings:
        return Decision("grade", of=last)
    regraded = sum(a.kind == "regrade" for _, a in gradings)
    if regraded < limits.regrade:
        return Decision("regrade", of=last)
    return Decision("final", "unresolved", None, INFRA_AFTER_PATCH, gradings[-1][0])


def check_history(attempts: Sequence[AttemptView], limits: Limits, where: str = "slot") -> Decision:
    """Validate a history attempt by attempt; return the decision after the last one."""
    for i, attempt in enumerate(attempts):
        expected = next_step(attempts[:i], limits)
        if expected.final:
            raise LedgerError(
                f"{where}: attempt {i} ({attempt.kind}) comes after the slot was "
                f"{expected.state} by attempt {expected.of}"
            )
        if attempt.kind != expected.action:
            raise LedgerError(
                f"{where}: attempt {i} is a {attempt.kind}, the ledger expected {expected.action}"
            )
        if attempt.kind in GRADING_KINDS and attempt.of != expected.of:
            raise LedgerError(
                f"{where}: attempt {i} grades attempt {attempt.of}, expected {expected.of}"
            )
        if attempt.kind in GRADING_KINDS and attempt.outcome == "patch":
            raise LedgerError(f"{where}: attempt {i}: a grading cannot end with a patch")
        if attempt.kind in GENERATION_KINDS and attempt.outcome == "report":
            raise LedgerError(f"{where}: attempt {i}: a generation cannot end with a report")
        if attempt.outcome == "report" and attempt.verdict not in (0, 1, None):
            raise LedgerError(f"{where}: attempt {i}: verdict {attempt.verdict!r}")
    return next_step(attempts, limits)
