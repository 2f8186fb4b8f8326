"""Rule stop_eval: every policy on the sealed split (labels through the seal), the gate once."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stopping.jobs import StopEval, stop_eval_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> StopEval:
    return stop_eval_job(
        checkpoints=list(sm.input.checkpoints),
        scores=sm.input.scores,
        policies_json=sm.input.policies,
        protocol=sm.input.protocol,
        receipt=sm.input.receipt,
        out=sm.output[0],
        config=ctx.provenance_config,
        seal_dir=sm.params.seal_dir,
    )


def _gate_line(record: StopEval) -> str:
    return f"stop study gate: {record['gate']['verdict']}"


JOB = Job("stop_eval", inputs=rule_files, call=_call, console=_gate_line)
