"""Rule stop_checkpoints: every decision point of a model's eval trajectories, graded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stopping.build import checkpoints_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    study = Path(ctx.settings.stop.protocol).stem
    checkpoints_job(
        model=sm.wildcards.model,
        slots=list(sm.input.slots),
        tasks_paths=list(sm.input.tasks),
        gold_times=list(sm.input.gold_times),
        out=sm.output.checkpoints,
        grading=sm.params.grading,
        sandbox=sm.params.sandbox,
        budget=ctx.study_budget(study),
        study=study,
        retries=sm.params.retries,
        config=ctx.provenance_config,
        try_scope=ctx.settings.agent.try_scope,
    )


JOB = Job("stop_checkpoints", inputs=rule_files, call=_call)
