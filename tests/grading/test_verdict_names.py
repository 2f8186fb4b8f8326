"""The verdict kinds and test statuses are defined once (grading.verdicts) and what the
functions return stays the plain strings reports have always held."""

from __future__ import annotations

import json
from typing import get_args

from editcredit.grading.grader import ReportVerdict
from editcredit.grading.verdicts import SEVERITY, Status, VerdictKind, judge


def test_the_names_keep_their_strings():
    assert [s.value for s in Status] == [
        "passed", "failed", "timeout", "error", "xfail", "xpass", "skipped", "incomplete",
        "missing",
    ]  # fmt: skip
    assert [k.value for k in VerdictKind] == ["valid_1", "valid_0", "unresolved"]
    assert set(SEVERITY) == {s.value for s in Status}
    assert all(type(key) is str for key in SEVERITY)


def test_a_reports_verdict_is_one_of_the_kinds_or_a_graders_own():
    assert {k.value for k in VerdictKind} <= set(get_args(ReportVerdict))


def test_a_verdict_holds_plain_strings():
    verdict = judge(["t::a"], [], [])
    assert verdict.kind == VerdictKind.UNRESOLVED and type(verdict.kind) is str
    assert verdict.tests["t::a"].status == Status.MISSING
    assert type(verdict.tests["t::a"].status) is str
    assert json.dumps(verdict.kind) == '"unresolved"'
