"""Rule render_tables: paper/tables/*.tex from the result files (jinja2 templates)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.job_settings import TablesSettings
from editcredit.jobs.harness import Job, JobContext
from editcredit.report.jobs import tables_job
from editcredit.report.tables import TableInputs


def _inputs(sm: Any) -> tuple[TableInputs, str, str]:
    """The result files read, the template directory and the output directory."""
    files = TableInputs(
        controls=list(sm.input.controls),
        scores=list(sm.input.scores),
        comparisons=list(sm.input.comparisons),
        training=list(sm.input.training),
        audits=list(sm.input.audits),
        benchmarks=sorted(Path(p) for p in sm.input.benchmarks),
        benchmark_root=sm.params.benchmark_root,
        segments=list(sm.input.segments),
        replay=[sm.input.replay],
        slots=list(sm.input.slots),
    )
    return files, sm.params.template_dir, sm.params.out_dir


def _call(inputs: tuple[TableInputs, str, str], settings: TablesSettings, ctx: JobContext) -> None:
    files, template_dir, out_dir = inputs
    tables_job(
        files,
        settings,
        template_dir=template_dir,
        out_dir=out_dir,
        config=ctx.provenance_config,
        design=ctx.settings.training,
        level=ctx.settings.stats.bootstrap.level,
    )


JOB = Job("render_tables", inputs=_inputs, call=_call, settings=TablesSettings)
