"""Strict verdicts from per-phase observations, exactly as METHOD §6 defines them.

Pure functions: no sandbox, no I/O. An expected id's *status* is one of

``passed``     every phase observed, call passed, no phase failed
``failed``     the call phase FAILED (an independent witness of a valid 0)
``error``      setup or teardown failed
``xfail``      an expected failure (``xfail_not_run`` when run=False)
``xpass``      an unexpected pass of an xfail (strict or not)
``skipped``    skipped in setup or call
``incomplete`` the item's reports stop before teardown (the process ended)
``missing``    no collected item maps to the id
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from editcredit.sandbox.observations import ItemObservation

Status = Literal["passed", "failed", "error", "xfail", "xpass", "skipped", "incomplete", "missing"]
VerdictKind = Literal["valid_1", "valid_0", "unresolved"]

#: Worst first: a family's status is the worst status of its members.
SEVERITY: dict[str, int] = {
    "failed": 7,
    "error": 6,
    "xpass": 5,
    "xfail": 4,
    "skipped": 3,
    "incomplete": 2,
    "missing": 1,
    "passed": 0,
}


def item_status(item: ItemObservation) -> str:
    """The status of one collected item from its setup/call/teardown reports."""
    by_when = {}
    for phase in item.phases:
        # a repeated phase keeps the worst report
        prev = by_when.get(phase.when)
        if prev is None or (prev.outcome == "passed" and phase.outcome != "passed"):
            by_when[phase.when] = phase
    setup, call, teardown = (by_when.get(w) for w in ("setup", "call", "teardown"))
    if setup is None:
        return "incomplete"
    if setup.outcome == "failed":
        return "error"
    if setup.outcome == "skipped":
        return "xfail" if setup.wasxfail else "skipped"
    if call is None:
        return "incomplete"
    if call.outcome == "failed":
        return "xpass" if call.xpass_strict else "failed"
    if call.outcome == "skipped":
        return "xfail" if call.wasxfail else "skipped"
    if call.wasxfail:
        return "xpass"
    if teardown is None:
        return "incomplete"
    if teardown.outcome != "passed":
        return "error"
    return "passed"


def family_members(expected_id: str, items: Iterable[ItemObservation]) -> list[ItemObservation]:
    """Collected items that map to an expected id: the same node id, or its parametrizations
    when the expected id names the unparametrized function."""
    members = []
    for item in items:
        if item.nodeid == expected_id or (
            "[" not in expected_id and item.nodeid.startswith(expected_id + "[")
        ):
            members.append(item)
    return members


@dataclass(frozen=True)
class TestOutcome:
    """The status of one expected id and of every member of its alias family."""

    nodeid: str
    status: str
    members: list[tuple[str, str]] = field(default_factory=list)
    xfail_not_run: bool = False


def expected_statuses(
    expected_ids: Iterable[str], items: list[ItemObservation]
) -> dict[str, TestOutcome]:
    out = {}
    for expected in expected_ids:
        members = family_members(expected, items)
        statuses = [(m.nodeid, item_status(m)) for m in members]
        worst = max((s for _, s in statuses), key=SEVERITY.__getitem__, default="missing")
        not_run = any(p.xfail_not_run for m in members for p in m.phases)
        out[expected] = TestOutcome(expected, worst, statuses, not_run)
    return out


@dataclass(frozen=True)
class Verdict:
    """The verdict of a finished run: valid 1, valid 0, or unresolved (None) with a reason."""

    kind: VerdictKind
    resolved: int | None
    reason: str
    tests: dict[str, TestOutcome]


def judge(
    fail_to_pass: list[str], pass_to_pass: list[str], items: list[ItemObservation]
) -> Verdict:
    """METHOD §6: success needs complete evidence; a FAILED call is an independent witness
    of a valid 0; any other gap (error, xfail, xpass, skipped, missing) is unresolved."""
    tests = expected_statuses([*fail_to_pass, *pass_to_pass], items)
    failed = sorted(i for i, t in tests.items() if t.status == "failed")
    if failed:
        return Verdict("valid_0", 0, f"failed: {_short(failed)}", tests)
    gaps = sorted((i, t.status) for i, t in tests.items() if t.status != "passed")
    if gaps:
        reason = "; ".join(f"{status}: {i}" for i, status in gaps[:5])
        if len(gaps) > 5:
            reason += f"; ... {len(gaps) - 5} more"
        return Verdict("unresolved", None, reason, tests)
    return Verdict("valid_1", 1, "all expected tests passed", tests)


def _short(ids: list[str], limit: int = 5) -> str:
    text = ", ".join(ids[:limit])
    return text + (f", ... {len(ids) - limit} more" if len(ids) > limit else "")
