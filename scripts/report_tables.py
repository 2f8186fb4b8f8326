"""Rule render_tables: paper/tables/*.tex from the result files (jinja2 templates)."""

from editcredit.report.jobs import tables_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    tables_job(
        controls=list(snakemake.input.controls),  # noqa: F821
        scores=list(snakemake.input.scores),  # noqa: F821
        comparisons=list(snakemake.input.comparisons),  # noqa: F821
        training=list(snakemake.input.training),  # noqa: F821
        audits=list(snakemake.input.audits),  # noqa: F821
        benchmarks=list(snakemake.input.benchmarks),  # noqa: F821
        benchmark_root=snakemake.params.benchmark_root,  # noqa: F821
        template_dir=snakemake.params.template_dir,  # noqa: F821
        out_dir=snakemake.params.out_dir,  # noqa: F821
        main=snakemake.params.main,  # noqa: F821
        arm_order=snakemake.params.arm_order,  # noqa: F821
        run_order=snakemake.params.run_order,  # noqa: F821
        gpus_by_rule=snakemake.params.gpus_by_rule,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        segments=list(snakemake.input.segments),  # noqa: F821
        budget=snakemake.params.budget,  # noqa: F821
        replay=[snakemake.input.replay],  # noqa: F821
        slots=list(snakemake.input.slots),  # noqa: F821
    )
