"""Rule training_pool: the tasks every run trains on, screened by the base policy."""

from editcredit.job_settings import PoolJobSettings
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.rl.pool_job import PoolJob, training_pool_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
with logged(sm.log[0]):
    training_pool_job(
        PoolJob(
            base_model=sm.input.base,
            tasks=sm.input.tasks,
            controls=sm.input.controls,
            gold_times=sm.input.gold_times,
            out=sm.output.pool,
            screen=sm.output.screen,
        ),
        PoolJobSettings.from_mapping(sm.params.settings),
        gpus=sm.resources.gpu,
        threads=sm.threads,
        config=sm.config,
    )
