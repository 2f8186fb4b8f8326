"""Rule compare: the paired comparison plus the pre-registered claim gate (printed)."""

from editcredit.stats.jobs import gate_job
from editcredit.workflow import logged

gate = snakemake.params.gate  # noqa: F821 - injected by Snakemake
with logged(snakemake.log[0]):  # noqa: F821
    record = gate_job(
        snakemake.input[0],  # noqa: F821
        snakemake.output[0],  # noqa: F821
        min_difference=gate["min_difference"],
        ci_lower_above=gate["ci_lower_above"],
        config=snakemake.config,  # noqa: F821
    )
print(record["gate"]["line"])  # on the console too, not only in the log
