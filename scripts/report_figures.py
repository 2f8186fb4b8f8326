"""Rule figures: training and holdout curves, per-task differences, bootstrap (PDF and PNG)."""

from pathlib import Path

from editcredit.report.jobs import figures_job
from editcredit.workflow import logged

outputs = dict(snakemake.output.items())  # noqa: F821 - injected by Snakemake
bases = {key.rsplit("_", 1)[0]: str(Path(path).with_suffix("")) for key, path in outputs.items()}
with logged(snakemake.log[0]):  # noqa: F821
    figures_job(
        training=list(snakemake.input.training),  # noqa: F821
        paired=list(snakemake.input.paired),  # noqa: F821
        main=snakemake.params.main,  # noqa: F821
        curve=list(snakemake.input.curve),  # noqa: F821
        out=bases,
    )
