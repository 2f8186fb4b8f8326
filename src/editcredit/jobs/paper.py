"""Rule paper: compile paper/main.tex to paper/main.pdf with latexmk."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.report.jobs import paper_job
from editcredit.report.paper import TexMissingError


def _call(sm: Any, _settings: None, _ctx: JobContext) -> None:
    paper_job(
        tex=sm.input.tex,
        pdf=sm.output[0],
        build_dir=sm.params.build_dir,
        latexmk=sm.params.latexmk,
    )


JOB = Job("paper", inputs=rule_files, call=_call, console_errors=(TexMissingError,))
