"""Rule training_analysis: curves, health, failure categories and encounter effect of an arm."""

from editcredit.stats.jobs import training_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    training_job(
        snakemake.wildcards.arm,  # noqa: F821
        list(snakemake.input.segments),  # noqa: F821
        dict(snakemake.params.controls),  # noqa: F821
        snakemake.output[0],  # noqa: F821
        endpoint_step=snakemake.params.endpoint_step,  # noqa: F821
        n_buckets=snakemake.params.failure_buckets,  # noqa: F821
        encounter_ks=snakemake.params.encounter_k,  # noqa: F821
        bootstrap=snakemake.params.bootstrap,  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
