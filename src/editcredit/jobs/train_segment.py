"""Rule train_segment: k GRPO steps with the run's credit arm, from the previous segment."""

from __future__ import annotations

from typing import Any

from editcredit.job_settings import SegmentSettings
from editcredit.jobs.harness import Job, JobContext
from editcredit.rl.train_job import SegmentJob, train_segment_job


def _inputs(sm: Any) -> SegmentJob:
    return SegmentJob(
        run=sm.wildcards.run,
        step=int(sm.wildcards.step),
        previous=sm.input.previous,
        tasks=sm.input.tasks,
        controls=sm.input.controls,
        gold_times=sm.input.gold_times,
        pool=sm.input.pool,
        out_dir=sm.output.segment,
    )


def _call(job: SegmentJob, settings: SegmentSettings, ctx: JobContext) -> None:
    train_segment_job(
        job,
        settings,
        gpus=ctx.gpus,
        threads=ctx.threads,
        config=ctx.provenance_config,
        budget=ctx.budget("run"),
        models=ctx.models(),
    )


JOB = Job("train_segment", inputs=_inputs, call=_call, settings=SegmentSettings, gpu=True)
