"""Rule eval_plan: every slot (model x eval set x task x sample), written once with its hash."""

from __future__ import annotations

from typing import Any

from editcredit.evaluation.job import plan_job
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    plan_job(
        tasks_paths=list(sm.input.tasks),
        models=sm.params.models,
        evalsets=sm.params.evalsets,
        out_plan=sm.output.plan,
        out_summary=sm.output.summary,
        config=ctx.provenance_config,
        training_pool=sm.input.get("pool"),
    )


JOB = Job("eval_plan", inputs=rule_files, call=_call)
