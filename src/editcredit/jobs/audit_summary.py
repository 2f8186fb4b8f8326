"""Rule audit_summary: every audit of every run in one table for the paper."""

from __future__ import annotations

from typing import Any

from editcredit.audit.jobs import audit_summary_job
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    audit_summary_job(
        audit_paths=list(sm.input),
        out_parquet=sm.output[0],
        config=ctx.provenance_config,
    )


JOB = Job("audit_summary", inputs=rule_files, call=_call)
