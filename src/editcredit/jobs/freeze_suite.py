"""Rule freeze_suite: generate (or import) a suite and freeze it with its manifest."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.suites.build import build_suite


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    build_suite(
        suite=sm.wildcards.suite,
        suite_cfg=sm.params.suite,
        pinned_sha256=ctx.settings.suites[sm.wildcards.suite].manifest_sha256,
        sandbox_cfg=sm.params.sandbox,
        out_dir=sm.output.tasks.rsplit("/", 1)[0],
    )


JOB = Job("freeze_suite", inputs=rule_files, call=_call)
