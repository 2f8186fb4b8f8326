# editcredit: the research workflow. `snakemake --cores N` builds everything `rule all` asks.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/controls.smk"
include: "rules/policy.smk"
include: "rules/train.smk"
include: "rules/audit.smk"
include: "rules/eval.smk"
include: "rules/stats.smk"
include: "rules/stop.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        expand("results/controls/{suite}/summary.json", suite=config["suites"]),
        endpoint_segments(),
        "results/audits/summary.parquet",
        eval_targets(),
        stop_targets(),
        "paper/main.pdf",
