"""Rule candidate_coverage: the share of each suite's tasks whose gold fix is on the candidate
list, per split and per number of bugs (JSON result and the paper's table)."""

from __future__ import annotations

from typing import Any

from editcredit.agent.candidate_coverage import suite_coverage
from editcredit.agent.candidates import listed_candidates
from editcredit.data.freeze import load_tasks
from editcredit.io.provenance import write_result_json, write_result_tex
from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.report.candidates import coverage_tex


def _call(sm: Any, _settings: None, ctx: JobContext) -> dict[str, Any]:
    paths = dict(zip(sm.params.suites, sm.input.tasks, strict=True))
    suites = {name: load_tasks(path) for name, path in paths.items()}
    record = suite_coverage(suites, sm.params.try_scope, listed_candidates)
    inputs = list(paths.values())
    write_result_json(sm.output.json, record, inputs, ctx.provenance_config)
    write_result_tex(sm.output.tex, coverage_tex(record), inputs, ctx.provenance_config)
    return record


def _console(record: dict[str, Any]) -> str:
    totals = [rows[-1] for rows in record["suites"].values() if rows]
    return "; ".join(
        f"{r['suite']}: fix on the list for {r['covered']} of {r['tasks']} tasks" for r in totals
    )


JOB = Job("candidate_coverage", inputs=rule_files, call=_call, console=_console)
