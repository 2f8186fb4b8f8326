"""Rule control: gold and empty controls of every task of a frozen suite."""

from __future__ import annotations

from typing import Any

from editcredit.grading.control_suite import control_suite
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    control_suite(
        tasks_path=sm.input.tasks,
        per_task_dir=sm.output.per_task,
        summary_path=sm.output.summary,
        sandbox_cfg=sm.params.sandbox,
        grading_cfg=sm.params.grading,
        exclude_flagged=sm.params.exclude_flagged,
        config=ctx.provenance_config,
        pinned_sha256=ctx.settings.suites[sm.wildcards.suite].manifest_sha256,
    )


JOB = Job("control", inputs=rule_files, call=_call)
