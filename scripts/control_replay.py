"""Rule control_replay: the base policy replayed on a training seed's draws (no learning)."""

from editcredit.job_settings import ControlReplaySettings
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.rl.train_job import ControlReplayJob, control_replay_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
with logged(sm.log[0]):
    control_replay_job(
        ControlReplayJob(
            seed=int(sm.wildcards.seed),
            base_model=sm.input.base,
            tasks=sm.input.tasks,
            controls=sm.input.controls,
            gold_times=sm.input.gold_times,
            pool=sm.input.pool,
            out=sm.output.rollouts,
        ),
        ControlReplaySettings.from_mapping(sm.params.settings),
        gpus=sm.resources.gpu,
        threads=sm.threads,
        config=sm.config,
        budget=sm.config.get("budgets", {}).get("run"),
    )
