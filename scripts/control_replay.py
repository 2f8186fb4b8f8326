"""Rule control_replay: the base policy replayed on a training seed's draws (no learning)."""

from editcredit.rl.train_job import control_replay_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    control_replay_job(
        seed=int(sm.wildcards.seed),
        base_model=sm.input.base,
        tasks_path=sm.input.tasks,
        controls_path=sm.input.controls,
        out=sm.output.rollouts,
        training=sm.params.training,
        agent=sm.params.agent,
        reward=sm.params.reward,
        grading=sm.params.grading,
        sandbox=sm.params.sandbox,
        gpus=sm.resources.gpu,
        threads=sm.threads,
        config=sm.config,
        generation=sm.params.generation,
        budget=sm.config.get("budgets", {}).get("run"),
    )
