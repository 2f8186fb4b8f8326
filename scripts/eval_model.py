"""Rule eval_model: one model on one eval set, every slot to its final state (resumable)."""

from editcredit.evaluation.job import EvalModelJob, eval_model_job
from editcredit.job_settings import EvalModelSettings
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
with logged(sm.log[0]):
    eval_model_job(
        EvalModelJob(
            model=sm.wildcards.model,
            evalset=sm.wildcards.evalset,
            plan=sm.input.plan,
            model_dir=sm.params.model_dir,
            tasks=sm.input.tasks,
            slots=sm.output.slots,
            predictions=sm.output.predictions,
            gold_times=sm.input.gold_times,
        ),
        EvalModelSettings.from_mapping(sm.params.settings),
        gpus=sm.resources.gpu,
        threads=sm.threads,
        config=sm.config,
        # the storage floor and the budget, read from the config (not params: a new floor or
        # cap reruns nothing)
        storage=sm.config["training"]["health"],
        budget=sm.config.get("budgets", {}).get("evaluation"),
    )
