"""Rule stop_report: the paper's stop-policy section (table, text) and the success-cost figure."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.report.stop import stop_report_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    stop_report_job(
        eval_path=sm.input.eval,
        receipts=list(sm.input.receipts),
        budget=sm.params.budget,
        out_section=sm.output.section,
        out_pdf=sm.output.figure_pdf,
        out_png=sm.output.figure_png,
        config=ctx.provenance_config,
    )


JOB = Job("stop_report", inputs=rule_files, call=_call)
