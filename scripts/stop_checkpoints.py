"""Rule stop_checkpoints: every decision point of a model's eval trajectories, graded."""

from pathlib import Path

from editcredit.stopping.build import checkpoints_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
study = Path(sm.config["stop"]["protocol"]).stem
with logged(sm.log[0]):
    checkpoints_job(
        model=sm.wildcards.model,
        slots=list(sm.input.slots),
        tasks_paths=list(sm.input.tasks),
        gold_times=list(sm.input.gold_times),
        out=sm.output.checkpoints,
        grading=sm.params.grading,
        sandbox=sm.params.sandbox,
        budget=sm.config.get("budgets", {}).get("studies", {}).get(study),
        study=study,
        retries=sm.params.retries,
        config=sm.config,
    )
