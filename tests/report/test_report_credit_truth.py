"""The paper's table of the credit against the known truth and the sentence that states it
(report/credit_truth.py, paper/templates/credit_truth.tex.j2): every number comes from the
record."""

from __future__ import annotations

from pathlib import Path

import pytest

from editcredit.report.credit_truth import credit_truth_context, credit_truth_tex

TEMPLATES = Path(__file__).resolve().parents[2] / "paper" / "templates"


def _arm(fix, other, harmful, agreement, share, unlabelled=0):
    signs = ("positive", "zero", "negative")
    return {
        "table": {
            label: dict(zip(signs, counts, strict=True))
            for label, counts in (("fix", fix), ("other", other), ("harmful", harmful))
        },
        "unlabelled": unlabelled,
        "agreement": agreement,
        "positive_mass": 10.0,
        "positive_mass_on_fixes": 10.0 * share if share is not None else 0.0,
        "positive_mass_share": share,
        "runs": ["X-s1"],
        "blocks": {"fix": 1, "other": 1, "harmful": 0},
    }


RECORD = {
    "arms": {
        "B": _arm((267, 0, 0), (102, 113, 30), (0, 0, 0), 0.7421875, 0.2014),
        "M": _arm((275, 0, 0), (101, 101, 35), (0, 0, 2), 0.734375, 0.7517, unlabelled=3),
    },
    "expected_sign": {"fix": "positive", "other": "zero", "harmful": "negative"},
}


@pytest.mark.parametrize(
    "arm, row",
    [
        ("B", r"B & 267 & 0 & 0 & 102 & 113 & 30 & 0 & 0 & 0 & 0 & 74.2\% & 20.1\% \\"),
        ("M", r"M & 275 & 0 & 0 & 101 & 101 & 35 & 0 & 0 & 2 & 3 & 73.4\% & 75.2\% \\"),
    ],
)
def test_each_arm_is_a_row_of_the_record(arm, row):
    tex = credit_truth_tex(RECORD, TEMPLATES)
    assert row in tex.splitlines()
    assert r"\label{tab:credit_truth}" in tex


def test_the_sentence_states_each_arms_agreement_and_mass_on_fixes():
    tex = " ".join(credit_truth_tex(RECORD, TEMPLATES).split())
    assert (
        r"In arm B, 74.2\% of the 512 labelled queries had the sign of $D$ their label expects "
        r"and 20.1\% of the positive credit mass fell on turns that fixed a planted bug; in arm "
        r"M, 73.4\% of the 514 labelled queries" in tex
    )
    assert [a["labelled"] for a in credit_truth_context(RECORD)] == [512, 514]


def test_a_study_without_an_arm_that_queries_says_so():
    tex = credit_truth_tex({"arms": {}, "expected_sign": {}}, TEMPLATES)
    assert "No arm with a counterfactual query was trained" in tex
    assert r"\midrule" + "\n" + r"\bottomrule" in tex


def test_an_undefined_share_is_a_dash():
    record = {"arms": {"M": _arm((0, 0, 0), (0, 0, 0), (0, 0, 0), None, None)}}
    assert r"M & 0 & 0 & 0 & 0 & 0 & 0 & 0 & 0 & 0 & 0 & --- & --- \\" in credit_truth_tex(
        record, TEMPLATES
    )
