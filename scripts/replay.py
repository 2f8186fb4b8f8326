"""Rule replay: re-grade a hash-chosen sample of the stored gradings; identical or fail."""

from editcredit.replay.job import replay_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    replay_job(
        segments=list(sm.input.segments),
        tasks_path=sm.input.tasks,
        out=sm.output.summary,
        sandbox=sm.params.sandbox,
        grading=sm.params.grading,
        replay=sm.params.replay,
        config=sm.config,
    )
