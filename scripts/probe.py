"""Rule probe: is the base policy worth training? Rollouts on train and holdout tasks."""

from editcredit.agent.probe_job import probe_job
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    probe_job(
        model_dir=snakemake.input.model,  # noqa: F821
        tasks_path=snakemake.input.tasks,  # noqa: F821
        probe_cfg=snakemake.params.probe,  # noqa: F821
        agent_cfg=snakemake.params.agent,  # noqa: F821
        reward_cfg=snakemake.params.reward,  # noqa: F821
        sandbox_cfg=snakemake.params.sandbox,  # noqa: F821
        out_json=snakemake.output.probe,  # noqa: F821
        out_trajectories=snakemake.output.trajectories,  # noqa: F821
        gpus=snakemake.resources.gpu,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        generation=snakemake.params.generation,  # noqa: F821
    )
