"""Rule base_model: train the tiny default from scripted experts, or import a local model."""

from __future__ import annotations

from typing import Any

from editcredit.agent.base_job import base_model_job
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    base_model_job(
        model_cfg=sm.params.model,
        agent_cfg=sm.params.agent,
        sandbox_cfg=sm.params.sandbox,
        tasks_path=sm.input.tasks or None,
        corpus_paths=list(sm.input.corpus),
        controls_path=sm.input.controls or None,
        gold_times=sm.input.gold_times or None,
        out_dir=sm.output.model,
        gpus=sm.resources.gpu,
        budget=ctx.budget("base_model"),
    )


JOB = Job("base_model", inputs=rule_files, call=_call, gpu=True)
