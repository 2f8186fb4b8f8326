# editcredit: the research workflow. `snakemake --cores N` builds everything `rule all` asks.
import sys
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
include: "rules/storage.smk"


# The plan's storage forecast (editcredit.storage, docs/design.md "Storage"): one line on every
# invocation, dry runs included; a plan whose bytes would not leave training.health.
# min_free_disk_gb free stops here, before any job runs.
if workflow.is_main_process:
    from editcredit.storage.forecast import require_fit

    STORAGE_FORECAST = storage_forecast()
    print(STORAGE_FORECAST.line(), file=sys.stderr)
    require_fit(STORAGE_FORECAST, "storage forecast")


rule all:
    default_target: True
    input:
        PLAN.suite_summaries,
        PLAN.endpoint_segments,
        PLAN.pruned_records,
        layout.AUDIT_SUMMARY,
        layout.REPLAY_SUMMARY,
        PLAN.eval_targets,
        PLAN.stop_targets,
        layout.PAPER_PDF,
