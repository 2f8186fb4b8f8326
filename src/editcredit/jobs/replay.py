"""Rule replay: re-grade a hash-chosen sample of the stored gradings; identical or fail."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.replay.job import replay_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> Any:
    return replay_job(
        segments=list(sm.input.segments),
        tasks_path=sm.input.tasks,
        out=sm.output.summary,
        sandbox=sm.params.sandbox,
        grading=sm.params.grading,
        replay=sm.params.replay,
        config=ctx.provenance_config,
    )


JOB = Job("replay", inputs=rule_files, call=_call)
