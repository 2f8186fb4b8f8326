"""Reference outcomes against the grader's, project by project (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from editcredit.conformance.reference import unittest_key

RUNS = ("clean", "gold", "bug")
_PAREN = re.compile(r"^(?P<name>\w+) \((?P<where>[\w.]+)\)(?P<sub> .+)?$")


def comparable_id(runner: str, test_id: str) -> str:
    """One spelling per test: pytest node ids as they are, unittest-style ids (Django) as
    ``module.Class.name`` (a subtest's parameters kept after it: ``module.Class.name (i=1)``),
    SymPy ids as ``path::name``."""
    if runner == "django":
        match = _PAREN.match(test_id)
        if not match:
            return test_id
        return unittest_key(match["name"], match["where"]) + (match["sub"] or "")
    return test_id


def is_subtest(runner: str, test: str) -> bool:
    """A Django subtest's id (``module.Class.name (params)``)."""
    return runner == "django" and " " in test


@dataclass(frozen=True)
class Mismatch:
    run: str  # clean, gold or bug
    test: str
    reference: str  # 'absent' when the reference has no such test
    grader: str  # 'absent' when the grader observed no such test


def mismatches(
    run: str, reference: dict[str, str], grader: dict[str, str], runner: str = "pytest"
) -> list[Mismatch]:
    """Every test whose status differs, or that only one side saw. unittest's verbose output
    (Django's reference) prints a subtest only when it fails or errs: a subtest the grader saw
    pass and the reference does not list is the same outcome."""
    out = []
    for test in sorted(set(reference) | set(grader)):
        ref, got = reference.get(test, "absent"), grader.get(test, "absent")
        if ref == "absent" and got == "passed" and is_subtest(runner, test):
            continue
        if ref != got:
            out.append(Mismatch(run, test, ref, got))
    return out


def flips(clean: dict[str, str], bug: dict[str, str]) -> list[str]:
    """Tests whose status differs between the clean tree and the planted bug."""
    return sorted(t for t in set(clean) | set(bug) if clean.get(t) != bug.get(t))


def expected_lists(clean: dict[str, str], bug: dict[str, str]) -> tuple[list[str], list[str]]:
    """FAIL_TO_PASS: tests that pass on the clean tree and stop passing under the bug;
    PASS_TO_PASS: every other test that passes on the clean tree."""
    passing = sorted(t for t, s in clean.items() if s == "passed")
    f2p = [t for t in passing if bug.get(t) != "passed"]
    return f2p, [t for t in passing if t not in f2p]


@dataclass
class ProjectResult:
    """One line of the report."""

    project: str
    version: str
    runner: str
    tests: int = 0  # tests the reference saw on the clean tree
    matches: int = 0  # (run, test) pairs with equal statuses, over the three runs
    mismatches: int = 0
    clean: str = ""  # the grader's verdict of the clean tree (empty patch)
    gold: str = ""  # ... of the benign gold patch
    bug: str = ""  # ... of the planted one-line bug
    tampering: bool = False
    flips_reference: int = 0
    flips_grader: int = 0
    flips_equal: bool = False
    ok: bool = False
    error: str = ""
    reasons: dict[str, str] = field(default_factory=dict)
    details: list[dict] = field(default_factory=list)  # the mismatches, at most 50
    collect_errors: dict[str, list[str]] = field(default_factory=dict)  # the grader's, by run
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def judge_project(
    result: ProjectResult,
    reference: dict[str, dict[str, str]],
    grader: dict[str, dict[str, str]],
    verdicts: Mapping[str, tuple[str, bool, str]],
) -> ProjectResult:
    """Fill ``result`` from the three runs' statuses (run -> test -> status) and verdicts
    (run -> (verdict, tampering, reason)). ``ok``: every status matches, the clean and gold
    trees are ``valid_1``, the bug is ``valid_0``, no tampering, the same flips."""
    found: list[Mismatch] = []
    pairs = 0
    for run in RUNS:
        ref, got = reference.get(run, {}), grader.get(run, {})
        found += mismatches(run, ref, got, result.runner)
        pairs += len(set(ref) | set(got))
    ref_flips = flips(reference.get("clean", {}), reference.get("bug", {}))
    got_flips = flips(grader.get("clean", {}), grader.get("bug", {}))
    result.tests = len(reference.get("clean", {}))
    result.mismatches = len(found)
    result.matches = pairs - len(found)
    result.details = [asdict(m) for m in found[:50]]
    result.clean, result.gold, result.bug = (verdicts.get(r, ("", False, ""))[0] for r in RUNS)
    result.tampering = any(verdicts.get(r, ("", False, ""))[1] for r in RUNS)
    result.reasons = {r: verdicts[r][2] for r in RUNS if r in verdicts}
    result.flips_reference, result.flips_grader = len(ref_flips), len(got_flips)
    result.flips_equal = ref_flips == got_flips
    result.ok = (
        not found
        and result.clean == "valid_1"
        and result.gold == "valid_1"
        and result.bug == "valid_0"
        and not result.tampering
        and result.flips_equal
        and result.flips_reference > 0
        and not result.error
    )
    return result
