"""Rule prune_segment: remove a segment's model and optimiser files, recording what went."""

from __future__ import annotations

from typing import Any

from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.storage.retention import prune_segment


def _call(sm: Any, _settings: None, ctx: JobContext) -> dict[str, Any]:
    record = prune_segment(
        sm.input.segment,
        sm.output[0],
        {
            "run": sm.wildcards.run,
            "step": int(sm.wildcards.step),
            # from the settings tree, not params: a new k reruns no earlier prune (it keeps
            # its record)
            "keep_checkpoints": int(ctx.settings.training.keep_checkpoints),
            "next_segment": sm.input.next,
        },
    )
    removed, freed = len(record["removed"]), record["bytes_freed"]
    print(f"{sm.input.segment}: removed {removed} file(s), {freed} bytes")
    return record


JOB = Job("prune_segment", inputs=rule_files, call=_call)
