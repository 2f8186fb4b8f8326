"""Rule evalset_scores: every model's score (or bounds) on one eval set."""

from editcredit.stats.jobs import evalset_scores_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    evalset_scores_job(
        list(snakemake.input.slots),  # noqa: F821
        snakemake.output[0],  # noqa: F821
        snakemake.wildcards.evalset,  # noqa: F821
        snakemake.config,  # noqa: F821
        n_samples=snakemake.params.n_samples or None,  # noqa: F821
    )
