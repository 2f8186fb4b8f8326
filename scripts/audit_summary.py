"""Rule audit_summary: every audit of every run in one table for the paper."""

from editcredit.audit.jobs import audit_summary_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    audit_summary_job(
        audit_paths=list(snakemake.input),  # noqa: F821
        out_parquet=snakemake.output[0],  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
