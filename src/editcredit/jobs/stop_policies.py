"""Rule stop_policies: fit the learned stop policies on the fit splits, score every point."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stopping.jobs import stop_policies_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    stop_policies_job(
        checkpoints=list(sm.input.checkpoints),
        protocol=sm.input.protocol,
        receipt=sm.input.receipt,
        out_scores=sm.output.scores,
        out_policies=sm.output.policies,
        config=ctx.provenance_config,
    )


JOB = Job("stop_policies", inputs=rule_files, call=_call)
