"""Rule freeze_suite: generate (or import) a suite and freeze it with its manifest."""

from editcredit.data.build_suite import build_suite
from editcredit.workflow import logged

with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
    build_suite(
        suite=snakemake.wildcards.suite,  # noqa: F821
        suite_cfg=snakemake.params.suite,  # noqa: F821
        pinned_sha256=snakemake.config["suites"][snakemake.wildcards.suite][  # noqa: F821
            "manifest_sha256"
        ],
        sandbox_cfg=snakemake.params.sandbox,  # noqa: F821
        out_dir=snakemake.output.tasks.rsplit("/", 1)[0],  # noqa: F821
    )
