"""Rule base_model: train the tiny default from scripted experts, or import a local model."""

from editcredit.agent.base_job import base_model_job
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.workflow import logged

declare_gpu_mem_mb(snakemake.resources)  # noqa: F821 - the GPU memory its job binds
with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    base_model_job(
        model_cfg=snakemake.params.model,  # noqa: F821
        agent_cfg=snakemake.params.agent,  # noqa: F821
        sandbox_cfg=snakemake.params.sandbox,  # noqa: F821
        tasks_path=snakemake.input.tasks or None,  # noqa: F821
        corpus_paths=list(snakemake.input.corpus),  # noqa: F821
        controls_path=snakemake.input.controls or None,  # noqa: F821
        gold_times=snakemake.input.gold_times or None,  # noqa: F821
        out_dir=snakemake.output.model,  # noqa: F821
        gpus=snakemake.resources.gpu,  # noqa: F821
        budget=snakemake.config.get("budgets", {}).get("base_model"),  # noqa: F821
    )
