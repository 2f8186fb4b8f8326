"""Rule eval_model: one model on one eval set, every slot to its final state (resumable)."""

from __future__ import annotations

from typing import Any

from editcredit.evaluation.job import EvalModelJob, eval_model_job
from editcredit.job_settings import EvalModelSettings
from editcredit.jobs.harness import Job, JobContext


def _inputs(sm: Any) -> EvalModelJob:
    return EvalModelJob(
        model=sm.wildcards.model,
        evalset=sm.wildcards.evalset,
        plan=sm.input.plan,
        model_dir=sm.params.model_dir,
        tasks=sm.input.tasks,
        slots=sm.output.slots,
        predictions=sm.output.predictions,
        gold_times=sm.input.gold_times,
    )


def _call(job: EvalModelJob, settings: EvalModelSettings, ctx: JobContext) -> None:
    eval_model_job(
        job,
        settings,
        gpus=ctx.gpus,
        threads=ctx.threads,
        config=ctx.provenance_config,
        # the storage floor and the budget, from the settings tree (not params: a new floor or
        # cap reruns nothing)
        storage=ctx.settings.training.health.to_dict(),
        budget=ctx.budget("evaluation"),
        models=ctx.models(),
    )


JOB = Job("eval_model", inputs=_inputs, call=_call, settings=EvalModelSettings, gpu=True)
