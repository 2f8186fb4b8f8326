"""Rule audit_params: audit one checkpoint against its base and previous checkpoint."""

from __future__ import annotations

from typing import Any

from editcredit.audit.jobs import audit_params_job
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    audit_params_job(
        ckpt_model=sm.params.ckpt_model,
        base_model=sm.input.base,
        previous_model=sm.params.previous_model,
        out_json=sm.output[0],
        run=sm.wildcards.run,
        step=int(sm.wildcards.step),
        endpoint_step=sm.params.endpoint_step,
        audit_cfg=sm.params.cfg,
        config=ctx.provenance_config,
        models=ctx.models(),
    )


JOB = Job("audit_params", inputs=rule_files, call=_call)
