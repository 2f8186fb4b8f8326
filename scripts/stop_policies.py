"""Rule stop_policies: fit the learned stop policies on the fit splits, score every point."""

from editcredit.stopping.jobs import stop_policies_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    stop_policies_job(
        checkpoints=list(sm.input.checkpoints),
        protocol=sm.input.protocol,
        receipt=sm.input.receipt,
        out_scores=sm.output.scores,
        out_policies=sm.output.policies,
        config=sm.config,
    )
