"""Rule training_pool: the tasks every run trains on, screened by the base policy."""

from __future__ import annotations

from typing import Any

from editcredit.job_settings import PoolJobSettings
from editcredit.jobs.harness import Job, JobContext
from editcredit.rl.pool_job import PoolJob, training_pool_job


def _inputs(sm: Any) -> PoolJob:
    return PoolJob(
        base_model=sm.input.base,
        tasks=sm.input.tasks,
        controls=sm.input.controls,
        gold_times=sm.input.gold_times,
        out=sm.output.pool,
        screen=sm.output.screen,
    )


def _call(job: PoolJob, settings: PoolJobSettings, ctx: JobContext) -> None:
    training_pool_job(
        job,
        settings,
        gpus=ctx.gpus,
        threads=ctx.threads,
        config=ctx.provenance_config,
        models=ctx.models(),
    )


JOB = Job("training_pool", inputs=_inputs, call=_call, settings=PoolJobSettings, gpu=True)
