"""Rule import_model: bring a local Hugging Face directory in, with its identity receipt."""

from pathlib import Path

from editcredit.policy.base_job import import_model
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    import_model(
        snakemake.params.model["path"],  # noqa: F821
        Path(snakemake.output.model),  # noqa: F821
        snakemake.params.model,  # noqa: F821
        name=snakemake.wildcards.model,  # noqa: F821
    )
