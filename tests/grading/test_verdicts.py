"""METHOD §6, row by row, on synthetic observations (the real plugin is tested in sandbox/)."""

from __future__ import annotations

import pytest

from editcredit.grading.utility import training_score
from editcredit.grading.verdicts import RunEvidence, item_status, judge, sentinel_problems
from editcredit.sandbox.observations import ItemObservation, PhaseRecord

#: METHOD §3's utility weights, which the expected U values below are computed with.
WEIGHTS = (0.25, 0.25)


def item(nodeid: str, *phases: tuple) -> ItemObservation:
    recs = []
    for p in phases:
        when, outcome, *flags = p
        recs.append(
            PhaseRecord(
                when=when,
                outcome=outcome,
                wasxfail="wasxfail" in flags,
                xfail_not_run="notrun" in flags,
                xpass_strict="xpass_strict" in flags,
            )
        )
    return ItemObservation(nodeid=nodeid, phases=recs)


S, C, T = "setup", "call", "teardown"
PASSED = ((S, "passed"), (C, "passed"), (T, "passed"))
FAILED = ((S, "passed"), (C, "failed"), (T, "passed"))


@pytest.mark.parametrize(
    "phases,status",
    [
        (PASSED, "passed"),
        (FAILED, "failed"),
        (((S, "failed"), (T, "passed")), "error"),
        (((S, "passed"), (C, "passed"), (T, "failed")), "error"),
        (((S, "skipped"), (T, "passed")), "skipped"),
        (((S, "passed"), (C, "skipped"), (T, "passed")), "skipped"),
        (((S, "skipped", "wasxfail", "notrun"), (T, "passed")), "xfail"),
        (((S, "passed"), (C, "skipped", "wasxfail"), (T, "passed")), "xfail"),
        (((S, "passed"), (C, "passed", "wasxfail"), (T, "passed")), "xpass"),
        (((S, "passed"), (C, "failed", "xpass_strict"), (T, "passed")), "xpass"),
        (((S, "passed"),), "incomplete"),
        (((S, "passed"), (C, "passed")), "incomplete"),
    ],
)
def test_item_status(phases, status):
    assert item_status(item("t.py::x", *phases)) == status


F2P, P2P = ["t.py::f"], ["t.py::p"]


@pytest.mark.parametrize(
    "items,kind,resolved,reason_part",
    [
        # success needs complete evidence
        ([item("t.py::f", *PASSED), item("t.py::p", *PASSED)], "valid_1", 1, "all expected"),
        # a FAILED call is an independent witness of 0, even with other ids missing
        ([item("t.py::f", *FAILED)], "valid_0", 0, "failed: t.py::f"),
        ([item("t.py::p", *FAILED)], "valid_0", 0, "failed: t.py::p"),
        # missing on an expected id, nothing failed: unresolved
        ([item("t.py::f", *PASSED)], "unresolved", None, "missing: t.py::p"),
        # XFAIL / XPASS / ERROR / SKIPPED without a FAILED witness: unresolved
        (
            [
                item("t.py::f", (S, "passed"), (C, "skipped", "wasxfail"), (T, "passed")),
                item("t.py::p", *PASSED),
            ],
            "unresolved",
            None,
            "xfail: t.py::f",
        ),
        (
            [
                item("t.py::f", (S, "passed"), (C, "passed", "wasxfail"), (T, "passed")),
                item("t.py::p", *PASSED),
            ],
            "unresolved",
            None,
            "xpass: t.py::f",
        ),
        (
            [item("t.py::f", (S, "failed"), (T, "passed")), item("t.py::p", *PASSED)],
            "unresolved",
            None,
            "error: t.py::f",
        ),
        (
            [
                item("t.py::f", *PASSED),
                item("t.py::p", (S, "passed"), (C, "passed"), (T, "failed")),
            ],
            "unresolved",
            None,
            "error: t.py::p",
        ),
        (
            [item("t.py::f", (S, "skipped"), (T, "passed")), item("t.py::p", *PASSED)],
            "unresolved",
            None,
            "skipped: t.py::f",
        ),
        # an independent FAILED witness beats gaps elsewhere
        (
            [item("t.py::f", (S, "skipped"), (T, "passed")), item("t.py::p", *FAILED)],
            "valid_0",
            0,
            "failed: t.py::p",
        ),
        # a process that ended mid-item: unresolved
        (
            [item("t.py::f", (S, "passed")), item("t.py::p", *PASSED)],
            "unresolved",
            None,
            "incomplete: t.py::f",
        ),
    ],
)
def test_judge_rows(items, kind, resolved, reason_part):
    verdict = judge(F2P, P2P, items)
    assert (verdict.kind, verdict.resolved) == (kind, resolved)
    assert reason_part in verdict.reason


def test_alias_family_keeps_every_member_and_uses_the_worst():
    items = [item("t.py::f[a]", *PASSED), item("t.py::f[b]", *FAILED), item("t.py::p", *PASSED)]
    verdict = judge(["t.py::f"], P2P, items)
    assert verdict.kind == "valid_0"
    assert verdict.tests["t.py::f"].members == [("t.py::f[a]", "passed"), ("t.py::f[b]", "failed")]


def test_duplicate_collection_of_one_id_uses_the_worst():
    items = [
        item("t.py::f", *PASSED),
        item("t.py::f", (S, "skipped"), (T, "passed")),
        item("t.py::p", *PASSED),
    ]
    assert judge(F2P, P2P, items).kind == "unresolved"


def test_parametrized_expected_id_does_not_absorb_its_siblings():
    items = [
        item("t.py::f[a b]", *PASSED),
        item("t.py::f[a bc]", *FAILED),
        item("t.py::p", *PASSED),
    ]
    assert judge(["t.py::f[a b]"], P2P, items).kind == "valid_1"


@pytest.mark.parametrize(
    "f_status,p_status,Y,F,G,U",
    [
        (["passed", "passed"], ["passed"], 1, 1.0, 0, 1.25),
        (["passed", "failed"], ["passed"], 0, 0.5, 0, 0.125),
        (["passed", "passed"], ["failed"], 0, 1.0, 1, 0.0),
        (["failed", "failed"], ["passed"], 0, 0.0, 0, 0.0),
        (["skipped", "missing"], ["missing"], 0, 0.0, 1, -0.25),
        (["passed", "xfail"], ["passed"], 0, 0.5, 0, 0.125),
    ],
)
def test_training_score(f_status, p_status, Y, F, G, U):
    from editcredit.grading.verdicts import TestOutcome

    f_ids = [f"t.py::f{i}" for i in range(len(f_status))]
    p_ids = [f"t.py::p{i}" for i in range(len(p_status))]
    tests = {i: TestOutcome(i, s) for i, s in zip(f_ids + p_ids, f_status + p_status, strict=True)}
    score = training_score(f_ids, p_ids, tests, *WEIGHTS)
    assert (score.Y, score.F, score.G) == (Y, F, G)
    assert score.U == pytest.approx(U, abs=1e-12)


# --- METHOD §6: timeouts, tampering and completeness (RunEvidence), row by row

STARTED = ((S, "passed"),)  # an item killed at its own limit during its call


@pytest.mark.parametrize(
    "items,evidence,kind,reason_part",
    [
        # a reproduced per-test timeout is a FAILED call with reason timeout
        (
            [item("t.py::f", *STARTED), item("t.py::p", *PASSED)],
            RunEvidence(timed_out=frozenset({"t.py::f"})),
            "valid_0",
            "timeout (reproduced alone): t.py::f",
        ),
        # ... even when the item was killed before any phase was reported (a fixture loop)
        (
            [item("t.py::p", *PASSED)],
            RunEvidence(timed_out=frozenset({"t.py::f"})),
            "valid_0",
            "timeout",
        ),
        # a timed-out parametrization counts for its family
        (
            [item("t.py::f[a]", *PASSED), item("t.py::f[b]", *STARTED), item("t.py::p", *PASSED)],
            RunEvidence(timed_out=frozenset({"t.py::f[b]"})),
            "valid_0",
            "timeout",
        ),
        # a collection that timed out (and did again) is the patch's failure: never 1, never infra
        ([], RunEvidence(collect_timeout=True), "valid_0", "timeout: collection"),
        # tampering wins over everything, even over a FAILED witness
        (
            [item("t.py::f", *FAILED), item("t.py::p", *PASSED)],
            RunEvidence(tampering=("sentinel that must fail reported passed",)),
            "unresolved",
            "tampering: sentinel that must fail",
        ),
        (
            [item("t.py::f", *PASSED), item("t.py::p", *PASSED)],
            RunEvidence(timed_out=frozenset({"t.py::p"}), tampering=("changed x",)),
            "unresolved",
            "tampering: changed x",
        ),
        # all expected passed but the process ended before its session finished: no 1
        (
            [item("t.py::f", *PASSED), item("t.py::p", *PASSED)],
            RunEvidence(complete=False),
            "unresolved",
            "incomplete",
        ),
        # ... while a FAILED witness still decides a valid 0
        (
            [item("t.py::f", *FAILED), item("t.py::p", *PASSED)],
            RunEvidence(complete=False),
            "valid_0",
            "failed: t.py::f",
        ),
        ([item("t.py::f", *PASSED), item("t.py::p", *PASSED)], RunEvidence(), "valid_1", "all"),
    ],
)
def test_judge_evidence_rows(items, evidence, kind, reason_part):
    verdict = judge(F2P, P2P, items, evidence)
    assert verdict.kind == kind
    assert reason_part in verdict.reason
    assert verdict.tampering == reason_part.startswith("tampering")


def test_a_timeout_is_not_passing_in_the_training_score():
    items = [item("t.py::f", *PASSED), item("t.py::p", *STARTED)]
    verdict = judge(F2P, P2P, items, RunEvidence(timed_out=frozenset({"t.py::p"})))
    assert verdict.tests["t.py::p"].status == "timeout"
    assert training_score(F2P, P2P, verdict.tests, *WEIGHTS) == training_score(
        F2P,
        P2P,
        judge(F2P, P2P, [item("t.py::f", *PASSED), item("t.py::p", *FAILED)]).tests,
        *WEIGHTS,
    )


SENTINELS = {"s.py::a": "must_pass", "s.py::b": "must_fail"}


@pytest.mark.parametrize(
    "items,complete,problems",
    [
        ([item("s.py::a", *PASSED), item("s.py::b", *FAILED)], True, []),
        (
            [item("s.py::a", *PASSED), item("s.py::b", *PASSED)],
            True,
            ["sentinel that must fail reported passed"],
        ),
        (
            [item("s.py::a", *FAILED), item("s.py::b", *FAILED)],
            True,
            ["sentinel that must pass reported failed"],
        ),
        (
            [item("s.py::a", *PASSED)],
            True,
            ["sentinel that must fail reported missing"],
        ),
        # a run stopped early (timeout cap, crash) never reached them: not a forgery
        ([item("s.py::a", *PASSED)], False, []),
        ([], False, []),
        # but a wrong report is wrong whether or not the session finished
        ([item("s.py::b", *PASSED)], False, ["sentinel that must fail reported passed"]),
    ],
)
def test_sentinel_problems(items, complete, problems):
    assert sentinel_problems(SENTINELS, items, complete) == problems


@pytest.mark.parametrize("pass_name,fail_name", [("a", "b"), ("b", "a"), ("z1", "a9")])
def test_sentinel_problems_keep_one_order_whatever_the_names(pass_name, fail_name):
    """The sentinels' names are drawn per run: the problems come in the order of the roles."""
    roles = {f"s.py::{pass_name}": "must_pass", f"s.py::{fail_name}": "must_fail"}
    items = [item(f"s.py::{pass_name}", *FAILED), item(f"s.py::{fail_name}", *PASSED)]
    assert sentinel_problems(roles, items, True) == [
        "sentinel that must fail reported passed",
        "sentinel that must pass reported failed",
    ]
