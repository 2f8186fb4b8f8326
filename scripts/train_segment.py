"""Rule train_segment: k GRPO steps with the run's credit arm, from the previous segment."""

from editcredit.job_settings import SegmentSettings
from editcredit.policy.devices import declare_gpu_mem_mb
from editcredit.rl.train_job import SegmentJob, train_segment_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
with logged(sm.log[0]):
    train_segment_job(
        SegmentJob(
            run=sm.wildcards.run,
            step=int(sm.wildcards.step),
            previous=sm.input.previous,
            tasks=sm.input.tasks,
            controls=sm.input.controls,
            gold_times=sm.input.gold_times,
            pool=sm.input.pool,
            out_dir=sm.output.segment,
        ),
        SegmentSettings.from_mapping(sm.params.settings),
        gpus=sm.resources.gpu,
        threads=sm.threads,
        config=sm.config,
        budget=sm.config.get("budgets", {}).get("run"),
    )
