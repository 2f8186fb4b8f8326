"""``scores.json`` of one model on one eval set, from its ``slots.parquet`` and the plan.

The score is :func:`editcredit.stats.scores.score_table`'s (per-task mean over n, then the
equal-weight mean over tasks); with unresolved slots there are only the bounds
``[S/N, (S+N-K)/N]`` and ``score`` is null. Unresolved slots are counted by reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from editcredit.evaluation.plan import read_slice
from editcredit.stats.loaders import read_slots, score_model, unresolved_reasons


def scores_record(slots_path: str | Path, plan_path: str | Path, model: str, evalset: str):
    """The scores record (without provenance) of ``model`` on ``evalset``."""
    plan = read_slice(plan_path, model, evalset)
    frame = read_slots(slots_path)
    wrong = frame[(frame["model"] != model) | (frame["evalset"] != evalset)]
    if not wrong.empty:
        raise ValueError(
            f"{slots_path}: rows of another model or eval set, e.g. row {wrong.index[0]}"
        )
    score = score_model(frame, plan.tasks, plan.samples)
    task_scores = dict(zip(score.tasks, score.task_scores, strict=True))
    out: dict[str, Any] = {
        "model": model,
        "evalset": evalset,
        "run": plan.first("run"),
        "step": plan.first("step"),
        "diagnostic": plan.first("diagnostic"),
        "plan_sha256": plan.plan_sha256,
        "plan_version": plan.plan_version,
        "n_tasks": len(score.tasks),
        "n_samples": score.n_samples,
        "N": score.n_planned,
        "K": score.n_known,
        "S": score.n_successes,
        "resolved": score.resolved,
        "score": score.score,
        "bounds": [score.lower, score.upper],
        "n_unresolved": score.n_unresolved,
        "n_missing_rows": score.n_missing_rows,
        "unresolved_by_reason": unresolved_reasons(frame),
        "attempts": _total_attempts(slots_path),
        "task_scores": task_scores,
        "task_bounds": {
            t: [lo, hi]
            for t, lo, hi in zip(score.tasks, score.task_lower, score.task_upper, strict=True)
        },
    }
    return out


def _total_attempts(slots_path: str | Path) -> int:
    return int(pc.sum(pq.read_table(slots_path, columns=["attempts"])["attempts"]).as_py() or 0)
