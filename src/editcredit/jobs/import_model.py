"""Rule import_model: bring a local Hugging Face directory in, with its identity receipt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.policy.base_job import import_model


def _call(sm: Any, _settings: None, _ctx: JobContext) -> None:
    import_model(
        sm.params.model["path"],
        Path(sm.output.model),
        sm.params.model,
        name=sm.wildcards.model,
    )


JOB = Job("import_model", inputs=rule_files, call=_call)
