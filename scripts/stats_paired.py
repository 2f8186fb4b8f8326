"""Rule paired: a configured comparison A - B, before the claim gate."""

from editcredit.stats.jobs import paired_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    paired_job(
        snakemake.params.spec,  # noqa: F821
        list(snakemake.input.slots),  # noqa: F821
        list(snakemake.input.segments),  # noqa: F821
        snakemake.output[0],  # noqa: F821
        bootstrap=snakemake.params.bootstrap,  # noqa: F821
        histogram_bins=snakemake.params.histogram_bins,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        n_samples=snakemake.params.n_samples or None,  # noqa: F821
    )
