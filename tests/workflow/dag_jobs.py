"""Run the Snakemake command line and print, as JSON, every job of the DAG it builds (rule and
wildcards) beside the study plan's jobs (``PLAN.jobs`` of rules/common.smk) of the same run.

``python dag_jobs.py -n --forceall --cores 1 [--configfile ...]``, from the workflow's directory
(tests/workflow/test_study_plan.py)."""

from __future__ import annotations

import json
import sys

import snakemake.api  # noqa: F401  (imported before snakemake.workflow, as the CLI does)
import snakemake.workflow
from snakemake.cli import main

_build_dag = snakemake.workflow.Workflow._build_dag


def _print_jobs(self) -> None:
    _build_dag(self)
    dag = sorted([job.rule.name, sorted(job.wildcards_dict.items())] for job in self.dag.jobs)
    plan = sorted([job.rule, sorted(job.values.items())] for job in self.globals["PLAN"].jobs)
    print("DAG_JOBS " + json.dumps({"dag": dag, "plan": plan}, sort_keys=True))


snakemake.workflow.Workflow._build_dag = _print_jobs

if __name__ == "__main__":
    sys.exit(main())
