"""Rule evalset_scores: every model's score (or bounds) on one eval set."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stats.jobs import evalset_scores_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    evalset_scores_job(
        list(sm.input.slots),
        sm.output[0],
        sm.wildcards.evalset,
        ctx.provenance_config,
        n_samples=sm.params.n_samples or None,
    )


JOB = Job("evalset_scores", inputs=rule_files, call=_call)
