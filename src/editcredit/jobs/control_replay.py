"""Rule control_replay: the base policy replayed on a training seed's draws (no learning)."""

from __future__ import annotations

from typing import Any

from editcredit.job_settings import ControlReplaySettings
from editcredit.jobs.harness import Job, JobContext
from editcredit.rl.train_job import ControlReplayJob, control_replay_job


def _inputs(sm: Any) -> ControlReplayJob:
    return ControlReplayJob(
        seed=int(sm.wildcards.seed),
        base_model=sm.input.base,
        tasks=sm.input.tasks,
        controls=sm.input.controls,
        gold_times=sm.input.gold_times,
        pool=sm.input.pool,
        out=sm.output.rollouts,
    )


def _call(job: ControlReplayJob, settings: ControlReplaySettings, ctx: JobContext) -> None:
    control_replay_job(
        job,
        settings,
        gpus=ctx.gpus,
        threads=ctx.threads,
        config=ctx.provenance_config,
        budget=ctx.budget("run"),
        models=ctx.models(),
    )


JOB = Job("control_replay", inputs=_inputs, call=_call, settings=ControlReplaySettings, gpu=True)
