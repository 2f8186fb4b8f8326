"""Rule eval_plan: every slot (model x eval set x task x sample), written once with its hash."""

from editcredit.evaluation.job import plan_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    plan_job(
        tasks_paths=list(snakemake.input.tasks),  # noqa: F821
        models=snakemake.params.models,  # noqa: F821
        evalsets=snakemake.params.evalsets,  # noqa: F821
        out_plan=snakemake.output.plan,  # noqa: F821
        out_summary=snakemake.output.summary,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        training_pool=snakemake.input.get("pool"),  # noqa: F821
    )
