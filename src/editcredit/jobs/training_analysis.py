"""Rule training_analysis: curves, health, failure categories and encounter effect of an arm."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stats.jobs import training_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    training_job(
        sm.wildcards.arm,
        list(sm.input.segments),
        dict(sm.params.controls),
        sm.output[0],
        endpoint_step=sm.params.endpoint_step,
        n_buckets=sm.params.failure_buckets,
        encounter_ks=sm.params.encounter_k,
        bootstrap=sm.params.bootstrap,
        config=ctx.provenance_config,
    )


JOB = Job("training_analysis", inputs=rule_files, call=_call)
