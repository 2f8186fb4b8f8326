"""Rule eval_model_scores: score or bounds of one model on one eval set (unresolved by reason)."""

from editcredit.evaluation.job import scores_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    scores_job(
        slots_path=snakemake.input.slots,  # noqa: F821
        plan_path=snakemake.input.plan,  # noqa: F821
        model=snakemake.wildcards.model,  # noqa: F821
        evalset=snakemake.wildcards.evalset,  # noqa: F821
        out_scores=snakemake.output[0],  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
