"""Rule probe: is the base policy worth training? Rollouts on train and holdout tasks."""

from editcredit.agent.probe_job import probe_job
from editcredit.job_settings import ProbeJobSettings
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
with logged(sm.log[0]):
    probe_job(
        model_dir=sm.input.model,
        tasks_path=sm.input.tasks,
        gold_times=sm.input.gold_times,
        settings=ProbeJobSettings.from_mapping(sm.params.settings),
        out_json=sm.output.probe,
        out_trajectories=sm.output.trajectories,
        gpus=sm.resources.gpu,
        config=sm.config,
    )
