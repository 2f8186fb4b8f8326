"""Rule train_segment: k GRPO steps with the run's credit arm, from the previous segment."""

from editcredit.rl.train_job import train_segment_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    train_segment_job(
        run=sm.wildcards.run,
        step=int(sm.wildcards.step),
        previous=sm.input.previous,
        tasks_path=sm.input.tasks,
        controls_path=sm.input.controls,
        out_dir=sm.output.segment,
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
