"""Rule audit_params: audit one checkpoint against its base and previous checkpoint."""

from editcredit.audit.jobs import audit_params_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    audit_params_job(
        ckpt_model=snakemake.params.ckpt_model,  # noqa: F821
        base_model=snakemake.input.base,  # noqa: F821
        previous_model=snakemake.params.previous_model,  # noqa: F821
        out_json=snakemake.output[0],  # noqa: F821
        run=snakemake.wildcards.run,  # noqa: F821
        step=int(snakemake.wildcards.step),  # noqa: F821
        endpoint_step=snakemake.params.endpoint_step,  # noqa: F821
        audit_cfg=snakemake.params.cfg,  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
