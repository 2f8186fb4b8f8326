"""The paper's table of the credit against the known truth (the record of
``editcredit.stats.credit_truth.credit_truth_record``), with the sentence that states it: per arm
with a counterfactual query, the available queries by the selected block's label and the sign of
D, the agreement and the positive credit mass on the turns that fixed a planted bug
(``paper/templates/credit_truth.tex.j2``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editcredit.data.block_truth import FIX, HARMFUL, OTHER
from editcredit.report.latex import make_env, render_template

__all__ = ["LABEL_ORDER", "SIGN_ORDER", "TEMPLATE", "credit_truth_context", "credit_truth_tex"]

TEMPLATE = "credit_truth.tex.j2"
#: The table's label groups, and the signs of D in each (the order the columns show them).
LABEL_ORDER = (FIX, OTHER, HARMFUL)
SIGN_ORDER = ("positive", "zero", "negative")


def credit_truth_context(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per arm of the record, in its order: the record's fields and ``labelled`` (the
    queries counted in the table)."""
    return [
        {
            **result,
            "arm": arm,
            "labelled": sum(sum(signs.values()) for signs in result["table"].values()),
        }
        for arm, result in record["arms"].items()
    ]


def credit_truth_tex(record: Mapping[str, Any], template_dir: str | Path) -> str:
    """The sentence and the table (label ``tab:credit_truth``) of the record."""
    return render_template(
        make_env(template_dir),
        TEMPLATE,
        arms=credit_truth_context(record),
        labels=LABEL_ORDER,
        signs=SIGN_ORDER,
    )
