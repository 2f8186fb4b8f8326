"""Rule render_tables: paper/tables/*.tex from the result files (jinja2 templates)."""

from pathlib import Path

from editcredit.job_settings import TablesSettings
from editcredit.report.jobs import tables_job
from editcredit.report.tables import TableInputs
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    tables_job(
        TableInputs(
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
        ),
        TablesSettings.from_mapping(sm.params.settings),
        template_dir=sm.params.template_dir,
        out_dir=sm.params.out_dir,
        config=sm.config,
    )
