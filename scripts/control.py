"""Rule control: gold and empty controls of every task of a frozen suite."""

from editcredit.grading.control_suite import control_suite
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    control_suite(
        tasks_path=snakemake.input.tasks,  # noqa: F821
        per_task_dir=snakemake.output.per_task,  # noqa: F821
        summary_path=snakemake.output.summary,  # noqa: F821
        sandbox_cfg=snakemake.params.sandbox,  # noqa: F821
        grading_cfg=snakemake.params.grading,  # noqa: F821
        exclude_flagged=snakemake.params.exclude_flagged,  # noqa: F821
        config=snakemake.config,  # noqa: F821
        pinned_sha256=snakemake.config["suites"][snakemake.wildcards.suite][  # noqa: F821
            "manifest_sha256"
        ],
    )
