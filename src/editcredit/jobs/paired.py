"""Rule paired: a configured comparison A - B, before the claim gate."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.stats.jobs import paired_job


def _call(sm: Any, _settings: None, ctx: JobContext) -> None:
    paired_job(
        sm.params.spec,
        list(sm.input.slots),
        list(sm.input.segments),
        sm.output[0],
        bootstrap=sm.params.bootstrap,
        histogram_bins=sm.params.histogram_bins,
        config=ctx.provenance_config,
        n_samples=sm.params.n_samples or None,
    )


JOB = Job("paired", inputs=rule_files, call=_call)
