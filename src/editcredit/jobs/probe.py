"""Rule probe: is the base policy worth training? Rollouts on train and holdout tasks."""

from __future__ import annotations

from typing import Any

from editcredit.agent.probe_job import probe_job
from editcredit.job_settings import ProbeJobSettings
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, settings: ProbeJobSettings, ctx: JobContext) -> None:
    probe_job(
        model_dir=sm.input.model,
        tasks_path=sm.input.tasks,
        gold_times=sm.input.gold_times,
        settings=settings,
        out_json=sm.output.probe,
        out_trajectories=sm.output.trajectories,
        gpus=sm.resources.gpu,
        config=ctx.provenance_config,
    )


JOB = Job("probe", inputs=rule_files, call=_call, settings=ProbeJobSettings, gpu=True)
