"""A rule's script: the job of the rule that runs, from editcredit.jobs.<rule> (its harness)."""

from editcredit.jobs import run_rule

run_rule(snakemake)  # noqa: F821 - injected by Snakemake
