"""Rule credit_truth: the credit of the arms with a counterfactual query (B, M) against the known
truth of their selected blocks (JSON result and the paper's table with its sentence)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from editcredit.io.provenance import write_result_tex
from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.report.credit_truth import credit_truth_tex
from editcredit.stats.credit_truth import CreditTruthRecord
from editcredit.stats.jobs import credit_truth_job

__all__ = ["JOB", "credit_truth_files_job"]


def credit_truth_files_job(
    segments: Sequence[str | Path],
    out_json: str | Path,
    out_tex: str | Path,
    *,
    template: str | Path,
    config: Any,
) -> CreditTruthRecord:
    """The record of the segments' ledgers and truth rows (:func:`credit_truth_job`) and its
    table, rendered from ``template`` (``paper/templates/credit_truth.tex.j2``)."""
    record = credit_truth_job(segments, out_json, config=config)
    tex = credit_truth_tex(record, Path(template).parent)
    write_result_tex(out_tex, tex, [out_json, template], config)
    return record


def _call(sm: Any, _settings: None, ctx: JobContext) -> CreditTruthRecord:
    return credit_truth_files_job(
        list(sm.input.segments),
        sm.output.json,
        sm.output.tex,
        template=sm.input.template,
        config=ctx.provenance_config,
    )


def _console(record: CreditTruthRecord) -> str:
    parts = [
        f"{arm}: agreement " + ("-" if r["agreement"] is None else f"{r['agreement']:.3f}")
        for arm, r in record["arms"].items()
    ]
    return "credit against the known truth: " + ("; ".join(parts) or "no arm with a query")


JOB = Job("credit_truth", inputs=rule_files, call=_call, console=_console)
