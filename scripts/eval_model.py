"""Rule eval_model: one model on one eval set, every slot to its final state (resumable)."""

from editcredit.evaluation.job import eval_model_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    eval_model_job(
        plan_path=snakemake.input.plan,  # noqa: F821
        model=snakemake.wildcards.model,  # noqa: F821
        evalset=snakemake.wildcards.evalset,  # noqa: F821
        model_dir=snakemake.params.model_dir,  # noqa: F821
        tasks_path=snakemake.input.tasks,  # noqa: F821
        eval_cfg=snakemake.params.evaluation,  # noqa: F821
        agent_cfg=snakemake.params.agent,  # noqa: F821
        grading_cfg=snakemake.params.grading,  # noqa: F821
        sandbox_cfg=snakemake.params.sandbox,  # noqa: F821
        out_slots=snakemake.output.slots,  # noqa: F821
        out_predictions=snakemake.output.predictions,  # noqa: F821
        gpus=snakemake.resources.gpu,  # noqa: F821
        threads=snakemake.threads,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        generation=snakemake.params.generation,  # noqa: F821
        # the storage floor, read from the config (not params: a new floor reruns nothing)
        storage=snakemake.config["training"]["health"],  # noqa: F821
        budget=snakemake.config.get("budgets", {}).get("evaluation"),  # noqa: F821
    )
