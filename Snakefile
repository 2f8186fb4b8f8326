# editcredit: the research workflow. `snakemake --cores N` builds everything `rule all` asks.
from pathlib import Path

from snakemake.utils import min_version

from editcredit.config import validate_config

min_version("9.0")


configfile: "config/config.yaml"


# Fills the schema's defaults in place; a bad key fails here (and so `snakemake -n`), naming its
# path, e.g. "config: unknown key training.grpo.credit_lamda". rules/common.smk then builds the
# typed tree (editcredit.settings.Settings) once.
validate_config(config, Path(workflow.basedir, "config/schema.yaml"))


report: "paper/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/controls.smk"
include: "rules/policy.smk"
include: "rules/train.smk"
include: "rules/audit.smk"
include: "rules/replay.smk"
include: "rules/eval.smk"
include: "rules/stats.smk"
include: "rules/stop.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        suite_summaries(),
        endpoint_segments(),
        layout.AUDIT_SUMMARY,
        layout.REPLAY_SUMMARY,
        eval_targets(),
        stop_targets(),
        layout.PAPER_PDF,
