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
``timeout``    the item exceeded its own per-test limit, and did again on a rerun alone (the
               runner outside the test process killed it): a FAILED call, reason ``timeout``

Beyond the items, :class:`RunEvidence` carries what the runner saw from outside the test
process (confirmed timeouts, a collection that timed out, whether the session completed) and
what the integrity checks found (a changed reporting machinery, wrong sentinels).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from editcredit.sandbox.observations import ItemObservation, PhaseRecord
from editcredit.sandbox.runners import matches


class Status(StrEnum):
    """An expected id's status (the module's docstring says when each holds). Functions here
    return the plain ``.value``, so reports hold the same strings."""

    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"
    XFAIL = "xfail"
    XPASS = "xpass"
    SKIPPED = "skipped"
    INCOMPLETE = "incomplete"
    MISSING = "missing"


class VerdictKind(StrEnum):
    """The kind of a run's verdict (METHOD §6); :class:`Verdict` holds the plain ``.value``."""

    VALID_1 = "valid_1"  # resolved: every expected test passed, with complete evidence
    VALID_0 = "valid_0"  # an independent witness of a failure (a FAILED call, a timeout)
    UNRESOLVED = "unresolved"  # any other gap, or reports that cannot be trusted


#: Worst first: a family's status is the worst status of its members.
SEVERITY: dict[str, int] = {
    Status.TIMEOUT.value: 8,
    Status.FAILED.value: 7,
    Status.ERROR.value: 6,
    Status.XPASS.value: 5,
    Status.XFAIL.value: 4,
    Status.SKIPPED.value: 3,
    Status.INCOMPLETE.value: 2,
    Status.MISSING.value: 1,
    Status.PASSED.value: 0,
}


def item_status(item: ItemObservation) -> str:
    """The status of one collected item from its setup/call/teardown reports."""
    by_when: dict[str, PhaseRecord] = {}
    for phase in item.phases:
        # a repeated phase keeps the worst report
        prev = by_when.get(phase.when)
        if prev is None or (prev.outcome == "passed" and phase.outcome != "passed"):
            by_when[phase.when] = phase
    setup, call, teardown = (by_when.get(w) for w in ("setup", "call", "teardown"))
    if setup is None:
        return Status.INCOMPLETE.value
    if setup.outcome == "failed":
        return Status.ERROR.value
    if setup.outcome == "skipped":
        return Status.XFAIL.value if setup.wasxfail else Status.SKIPPED.value
    if call is None:
        return Status.INCOMPLETE.value
    if call.outcome == "failed":
        return Status.XPASS.value if call.xpass_strict else Status.FAILED.value
    if call.outcome == "skipped":
        return Status.XFAIL.value if call.wasxfail else Status.SKIPPED.value
    if call.wasxfail:
        return Status.XPASS.value
    if teardown is None:
        return Status.INCOMPLETE.value
    if teardown.outcome != "passed":
        return Status.ERROR.value
    return Status.PASSED.value


def family_members(
    expected_id: str,
    items: Iterable[ItemObservation],
    runner: str = "pytest",
    aliases: dict[str, list[str]] | None = None,
) -> list[ItemObservation]:
    """Collected items that map to an expected id: the same node id, or its parametrizations
    when the expected id names the unparametrized function. Another runner's items map by
    its own naming (``sandbox.runners.matches``: unittest's spellings of one test are one), or
    by one of the item's ``aliases`` (a unittest test's docstring line)."""
    if runner != "pytest":
        other = aliases or {}
        return [
            item
            for item in items
            if matches(runner, expected_id, item.nodeid)
            or expected_id in other.get(item.nodeid, ())
        ]
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
    expected_ids: Iterable[str],
    items: list[ItemObservation],
    timed_out: frozenset[str] | set[str] = frozenset(),
    runner: str = "pytest",
    aliases: dict[str, list[str]] | None = None,
) -> dict[str, TestOutcome]:
    """Each expected id's worst member status; ``timed_out`` items are ``timeout``."""
    out = {}
    for expected in expected_ids:
        members = family_members(expected, items, runner, aliases)
        statuses = [
            (m.nodeid, Status.TIMEOUT.value if m.nodeid in timed_out else item_status(m))
            for m in members
        ]
        statuses += [
            (n, Status.TIMEOUT.value)
            for n in sorted(timed_out)
            if n not in {m.nodeid for m in members} and n in _family_ids(expected, [n])
        ]
        worst = max(
            (s for _, s in statuses), key=SEVERITY.__getitem__, default=Status.MISSING.value
        )
        not_run = any(p.xfail_not_run for m in members for p in m.phases)
        out[expected] = TestOutcome(expected, worst, statuses, not_run)
    return out


def _family_ids(expected_id: str, nodeids: Iterable[str]) -> list[str]:
    return [
        n
        for n in nodeids
        if n == expected_id or ("[" not in expected_id and n.startswith(expected_id + "["))
    ]


@dataclass(frozen=True)
class RunEvidence:
    """What a run says beyond its items.

    ``timed_out``: items killed at their own limit whose rerun alone timed out again;
    ``collect_timeout``: collection exceeded its limit, and did again on a rerun;
    ``complete``: the last session finished and pytest returned to the runner;
    ``tampering``: changed reporting machinery or wrong sentinels (see :func:`sentinel_problems`).
    """

    timed_out: frozenset[str] = frozenset()
    collect_timeout: bool = False
    complete: bool = True
    tampering: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """The verdict of a finished run: valid 1, valid 0, or unresolved (None) with a reason.
    ``tampering``: unresolved because the test process's reports cannot be trusted."""

    kind: str  # a VerdictKind value
    resolved: int | None
    reason: str
    tests: dict[str, TestOutcome]
    tampering: bool = False


SENTINEL_WANT = {"must_pass": Status.PASSED.value, "must_fail": Status.FAILED.value}


def sentinel_problems(
    roles: dict[str, str], items: list[ItemObservation], complete: bool
) -> list[str]:
    """Sentinels reported otherwise than they must be. One that was never reported is a
    problem only when the session completed (a run stopped early never reached it). In the
    order of their roles: the sentinels' names are drawn for each run, so an order by name
    would change a forgery's reason from run to run."""
    status = {i.nodeid: item_status(i) for i in items}
    problems = []
    for nodeid, role in sorted(roles.items(), key=lambda entry: (entry[1], entry[0])):
        got = status.get(nodeid, Status.MISSING.value)
        if got == SENTINEL_WANT[role] or (
            got in (Status.MISSING.value, Status.INCOMPLETE.value) and not complete
        ):
            continue
        problems.append(f"sentinel that {role.replace('_', ' ')} reported {got}")
    return problems


def judge(
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    items: list[ItemObservation],
    evidence: RunEvidence | None = None,
    runner: str = "pytest",
    aliases: dict[str, list[str]] | None = None,
) -> Verdict:
    """METHOD §6: untrustworthy reports (tampering) are unresolved; success needs complete
    evidence; a FAILED call (or a reproduced per-test timeout, or a reproduced collection
    timeout) is an independent witness of a valid 0; any other gap (error, xfail, xpass,
    skipped, missing, a session that did not complete) is unresolved."""
    ev = evidence or RunEvidence()
    expected = [*fail_to_pass, *pass_to_pass]
    if ev.collect_timeout:
        tests = {i: TestOutcome(i, Status.TIMEOUT.value) for i in expected}
    else:
        tests = expected_statuses(expected, items, ev.timed_out, runner, aliases)
    if ev.tampering:
        return Verdict(
            VerdictKind.UNRESOLVED.value, None, f"tampering: {'; '.join(ev.tampering)}", tests, True
        )
    if ev.collect_timeout:
        reason = "timeout: collection exceeded its limit, and did again on a rerun"
        return Verdict(VerdictKind.VALID_0.value, 0, reason, tests)
    failed = sorted(i for i, t in tests.items() if t.status == Status.FAILED.value)
    timeouts = sorted(i for i, t in tests.items() if t.status == Status.TIMEOUT.value)
    if failed or timeouts:
        parts = [f"failed: {_short(failed)}"] if failed else []
        if timeouts:
            parts.append(f"timeout (reproduced alone): {_short(timeouts)}")
        return Verdict(VerdictKind.VALID_0.value, 0, "; ".join(parts), tests)
    gaps = sorted((i, t.status) for i, t in tests.items() if t.status != Status.PASSED.value)
    if gaps:
        reason = "; ".join(f"{status}: {i}" for i, status in gaps[:5])
        if len(gaps) > 5:
            reason += f"; ... {len(gaps) - 5} more"
        return Verdict(VerdictKind.UNRESOLVED.value, None, reason, tests)
    if not ev.complete:
        reason = "incomplete: the test process ended before its session finished"
        return Verdict(VerdictKind.UNRESOLVED.value, None, reason, tests)
    return Verdict(VerdictKind.VALID_1.value, 1, "all expected tests passed", tests)


def _short(ids: list[str], limit: int = 5) -> str:
    text = ", ".join(ids[:limit])
    return text + (f", ... {len(ids) - limit} more" if len(ids) > limit else "")
