"""Rule compare: the paired comparison plus the pre-registered claim gate (printed)."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stats.jobs import gate_job
from editcredit.stats.records import GatedRecord


def _call(sm: Any, _settings: None, ctx: JobContext) -> GatedRecord:
    gate = sm.params.gate
    return gate_job(
        sm.input[0],
        sm.output[0],
        min_difference=gate["min_difference"],
        ci_lower_above=gate["ci_lower_above"],
        config=ctx.provenance_config,
    )


def _gate_line(record: GatedRecord) -> str:
    """The gate's line, on the console too (not only in the log)."""
    return record["gate"]["line"]


JOB = Job("compare", inputs=rule_files, call=_call, console=_gate_line)
