"""The paper's stop section: the gate's verdict in words (a failed gate is a negative result),
the fit split's choice per learned model, and the not-applied case."""

from __future__ import annotations

import pytest

from editcredit.report.stop import family_choices, section_text, stop_figure


def _row(success, tokens, kind="fixed", vs=None):
    row = {"kind": kind, "success": success, "tokens": tokens, "trajectories": 4, "tasks": 2}
    if vs:
        row["vs_fixed"] = vs
    return row


def _record(verdict: str, sealed: bool = True):
    kinds = {
        "agent_submit": "fixed",
        "first_edit": "fixed",
        "visible_counts@1": "rule",
        "logistic@0.5": "learned",
        "logistic@0.9": "learned",
        "two_head@w=0": "learned",
    }
    fit = {
        "agent_submit": _row(0.5, 20.0),
        "first_edit": _row(0.25, 8.0),
        "visible_counts@1": _row(0.5, 15.0, "rule"),
        "logistic@0.5": _row(0.5, 12.0, "learned"),
        "logistic@0.9": _row(0.75, 19.5, "learned"),  # over the cap of 0.9 x 20 = 18
        "two_head@w=0": _row(0.5, 14.0, "learned"),
    }
    vs = {"policy": "first_edit", "difference": -0.05, "ci": [-0.2, 0.1], "tasks": 2}
    rec = {
        "protocol": "config/protocols/stop.yaml",
        "protocol_sha256": "ab" * 32,
        "frozen_at": "2026-12-01T10:00:00.000Z",
        "kinds": kinds,
        "fit": fit,
        "gate_choice": {"fit_token_cap": 18.0, "candidate": "two_head@w=0"},
        "sealed": {n: {**r, "vs_fixed": vs} if r["kind"] != "fixed" else r for n, r in fit.items()}
        if sealed
        else {},
    }
    if verdict == "not applied":
        rec["gate"] = {"verdict": verdict, "reason": "no sealed trajectories"}
    else:
        rec["gate"] = {
            "verdict": verdict,
            "candidate": "two_head@w=0",
            "baseline": "first_edit",
            "difference": -0.05,
            "ci": [-0.2, 0.1],
            "min_difference": 0.0,
            "ci_lower_above": 0.0,
        }
    return rec


RECEIPTS = [
    {
        "trajectories": 8,
        "points": 20,
        "distinct_trees": 9,
        "budget": {"spent": {"gradings": 9.0}, "infra_failures": 1},
    }
]


def test_the_fit_split_chooses_within_the_token_cap():
    assert family_choices(_record("fail")) == {
        "logistic": "logistic@0.5",
        "two_head": "two_head@w=0",
    }


@pytest.mark.parametrize(
    "verdict,words",
    [
        ("fail", ["\\textbf{fail}", "This is a negative result"]),
        ("pass", ["\\textbf{pass}"]),
        ("not applied", ["The gate was not applied: no sealed trajectories"]),
    ],
)
def test_the_section_states_the_verdict(verdict, words):
    text = section_text(
        _record(verdict, sealed=verdict != "not applied"), RECEIPTS, {"gradings": 100}
    )
    for w in words:
        assert w in text
    assert ("negative result" in text) == (verdict == "fail")
    assert "abababababababab" in text  # the protocol hash
    assert "9 gradings, 1 failed on infrastructure" in text
    assert "logistic@0.9" not in text  # not the fit split's choice: only in the figure
    if verdict != "not applied":  # every paired difference states its CI's half-width
        assert "[$-$20.0, +10.0] $\\pm$15.0 (task bootstrap)" in text
        assert "$-$5.0 [$-$20.0, +10.0] $\\pm$15.0 &" in text


@pytest.mark.parametrize("sealed", [True, False])
def test_the_table_rows_are_their_record(sealed):
    from record_shapes import assert_record

    from editcredit.report.stop import StopTableRow, table_rows

    verdict = "pass" if sealed else "not applied"
    rows = table_rows(_record(verdict, sealed=sealed))
    assert rows
    assert_record(rows, list[StopTableRow])


def test_the_figure_copes_with_an_empty_sealed_split(tmp_path):
    paths = stop_figure(_record("not applied", sealed=False), tmp_path / "stop_curve")
    assert all(p.stat().st_size > 1000 for p in paths)
