"""Rule stop_eval: every policy on the sealed split (labels through the seal), the gate once."""

from editcredit.stopping.jobs import stop_eval_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    record = stop_eval_job(
        checkpoints=list(sm.input.checkpoints),
        scores=sm.input.scores,
        policies_json=sm.input.policies,
        protocol=sm.input.protocol,
        receipt=sm.input.receipt,
        out=sm.output[0],
        config=sm.config,
        seal_dir=sm.params.seal_dir,
    )
print(f"stop study gate: {record['gate']['verdict']}")
