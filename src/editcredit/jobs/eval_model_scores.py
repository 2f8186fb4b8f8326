"""Rule eval_model_scores: score or bounds of one model on one eval set (unresolved by reason)."""

from __future__ import annotations

from typing import Any

from editcredit.evaluation.job import scores_job
from editcredit.jobs.harness import Job, JobContext, rule_files


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    scores_job(
        slots_path=sm.input.slots,
        plan_path=sm.input.plan,
        model=sm.wildcards.model,
        evalset=sm.wildcards.evalset,
        out_scores=sm.output[0],
        config=ctx.provenance_config,
    )


JOB = Job("eval_model_scores", inputs=rule_files, call=_call)
