"""What a replayed grading must reproduce: the outcome, the verdict and every per-test status.

Pure functions over stored reports (``editcredit.grading.stored_report``): the per-test
``status`` of each expected test id is compared, not messages, members or the log tail (those
carry no decision and may word the same status differently across pytest versions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["decision", "differences"]


def decision(report: Mapping[str, Any]) -> dict[str, Any]:
    """The decision of a stored report: outcome, verdict, and test id -> status (sorted)."""
    tests = report.get("tests") or {}
    return {
        "outcome": report.get("outcome"),
        "verdict": report.get("verdict"),
        "tests": {t: (tests[t] or {}).get("status") for t in sorted(tests)},
    }


def differences(stored: Mapping[str, Any], replayed: Mapping[str, Any]) -> list[str]:
    """``what: stored -> replayed`` for every part of the decision that differs (empty: the
    replay reproduced the grading)."""
    a, b = decision(stored), decision(replayed)
    out = [f"{k}: {a[k]!r} -> {b[k]!r}" for k in ("outcome", "verdict") if a[k] != b[k]]
    for test in sorted(set(a["tests"]) | set(b["tests"])):
        old, new = a["tests"].get(test, "<absent>"), b["tests"].get(test, "<absent>")
        if old != new:
            out.append(f"test {test}: {old} -> {new}")
    return out
