"""Rule figures: training and holdout curves, per-task differences, bootstrap (PDF and PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.report.jobs import figures_job


def _call(sm: Any, _settings: None, _ctx: JobContext) -> None:
    outputs = dict(sm.output.items())  # each figure's files: <name>_pdf, <name>_png
    bases = {key.rsplit("_", 1)[0]: str(Path(p).with_suffix("")) for key, p in outputs.items()}
    figures_job(
        training=list(sm.input.training),
        paired=list(sm.input.paired),
        main=sm.params.main,
        curve=list(sm.input.curve),
        out=bases,
    )


JOB = Job("figures", inputs=rule_files, call=_call)
