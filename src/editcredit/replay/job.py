"""Rule replay: re-grade a hash-chosen sample of the study's stored gradings through the
training grader and sandbox, and require the stored decisions (outcome, verdict, every per-test
status) again.

The sample (:mod:`editcredit.replay.sample`) is drawn from the replayable gradings of every
segment (:mod:`editcredit.replay.stored`); gradings of one tree (task, patch) are re-graded
once. A fresh infrastructure failure is retried once (it is an attempt failure, not a
grade); a second one counts as a mismatch. ``results/replay/summary.json`` records the counts,
the sample's keys, the grader that replayed and the graders the segments recorded. Any mismatch
raises :class:`ReplayMismatch` instead: its ``record`` (the summary with both reports of every
mismatch) is what the workflow's failure record keeps (``editcredit.job_records``), and no
summary is written.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, grade_patch
from editcredit.grading.grader_identity import grader_changes, grader_identity
from editcredit.grading.stored_report import stored_report
from editcredit.replay.compare import decision, differences
from editcredit.replay.sample import choose
from editcredit.replay.stored import StoredGrading, read_study, unreplayable_reason

__all__ = [
    "Mismatch",
    "ReplayCounts",
    "ReplayMismatch",
    "ReplaySummary",
    "SampledGrading",
    "SegmentGraders",
    "replay_job",
    "replay_sample",
    "replay_study",
    "segment_graders",
]

log = logging.getLogger(__name__)

Grade = Callable[[Task, str], GradingReport]


class Mismatch(TypedDict):
    """A stored grading the replay decided otherwise."""

    key: str  # the stored grading's key
    source: str  # the file it is stored in
    differences: list[str]  # what differs (outcome, verdict, per-test statuses)
    stored: dict[str, Any]  # the stored report (stored_report's JSON form)
    replayed: dict[str, Any]  # the fresh one, same form


class ReplayCounts(TypedDict):
    """What the replay of a sample graded."""

    trees: int  # distinct trees (task, patch) re-graded
    attempts: int  # gradings run (a fresh infrastructure failure is retried once)


class SampledGrading(TypedDict):
    """One stored grading of the sample."""

    key: str
    source: str


class SegmentGraders(TypedDict):
    """One grader identity the segments' receipts record, and the segments recording it."""

    grader: dict[str, Any] | None  # the receipt's grader (None: not recorded)
    changes: list[str]  # "field: old -> new" against the replay's grader
    segments: list[str]


class ReplaySummary(TypedDict):
    """The replay check (``results/replay/summary.json``, less its provenance)."""

    stored: int  # stored gradings of every segment
    stored_by_kind: dict[str, int]  # by kind (final, counterfactual), sorted
    replayable: int
    excluded: dict[str, int]  # unreplayable gradings by reason, sorted
    fraction: float  # config replay.fraction
    minimum: int  # config replay.minimum
    sampled: int
    sampled_by_kind: dict[str, int]
    trees_graded: int
    grading_attempts: int
    identical: int  # sampled gradings decided the same
    mismatches: list[Mismatch]  # empty in a written summary (a mismatch raises)
    sample: list[SampledGrading]
    grader: dict[str, Any]  # the identity of the grader that replayed
    segment_graders: list[SegmentGraders]


class ReplayMismatch(RuntimeError):
    """Re-graded stored gradings gave other decisions; ``record`` holds both reports."""

    def __init__(self, message: str, record: ReplaySummary) -> None:
        super().__init__(message)
        self.record = record


def _regrade(grade: Grade, task: Task, patch: str) -> tuple[dict[str, Any], int]:
    """The stored form of a fresh grading, and how many attempts it took (a fresh
    infrastructure failure is retried once)."""
    report = grade(task, patch)
    if report.outcome == "verdict":
        return stored_report(report), 1
    return stored_report(grade(task, patch)), 2


def replay_sample(
    chosen: Sequence[StoredGrading], tasks: Mapping[str, Task], grade: Grade
) -> tuple[list[Mismatch], ReplayCounts]:
    """Re-grade ``chosen`` (each tree once) and compare; returns the mismatches (key, source,
    differences, both reports) and counts (trees graded, attempts)."""
    fresh: dict[tuple[str, str], dict[str, Any]] = {}
    attempts = 0
    mismatches: list[Mismatch] = []
    for grading in chosen:
        task = tasks.get(grading.instance_id)
        if task is None:
            raise ValueError(
                f"{grading.source}: task {grading.instance_id} is not in the training suite"
            )
        if grading.tree not in fresh:
            fresh[grading.tree], n = _regrade(grade, task, grading.patch)
            attempts += n
        replayed = fresh[grading.tree]
        diff = differences(grading.report, replayed)
        log.info("replay %s: %s", grading.key, "; ".join(diff) or "identical")
        if diff:
            mismatches.append(
                {
                    "key": grading.key,
                    "source": grading.source,
                    "differences": diff,
                    "stored": grading.report,
                    "replayed": replayed,
                }
            )
    return mismatches, {"trees": len(fresh), "attempts": attempts}


def segment_graders(
    segments: Iterable[str | Path], current: Mapping[str, Any]
) -> list[SegmentGraders]:
    """The grader identities the segments' receipts record (``segment.json`` ``grader``), each
    with its segments and its differences from ``current`` (the replay's)."""
    groups: dict[str, SegmentGraders] = {}
    for segment in segments:
        receipt = Path(segment) / "segment.json"
        recorded = json.loads(receipt.read_text()).get("grader") if receipt.is_file() else None
        key = json.dumps(recorded, sort_keys=True)
        if key not in groups:
            groups[key] = {
                "grader": recorded,
                "changes": grader_changes(recorded, current),
                "segments": [],
            }
        groups[key]["segments"].append(str(segment))
    return list(groups.values())


def _message(mismatches: list[Mismatch], sampled: int) -> str:
    lines = [f"replay: {len(mismatches)} of {sampled} re-graded stored gradings differ"]
    for m in mismatches:
        lines.append(
            f"- {m['key']} ({m['source']}): {'; '.join(m['differences'])}\n"
            f"  stored   {json.dumps(decision(m['stored']), sort_keys=True)}\n"
            f"  replayed {json.dumps(decision(m['replayed']), sort_keys=True)}"
        )
    return "\n".join(lines)


def replay_study(
    segments: Sequence[str | Path],
    tasks: Mapping[str, Task],
    grade: Grade,
    fraction: float,
    minimum: int,
    grader: Mapping[str, Any],
) -> ReplaySummary:
    """The replay of the segments' stored gradings: the summary, or :class:`ReplayMismatch`."""
    stored = read_study(segments)
    excluded = Counter(r for g in stored if (r := unreplayable_reason(g.report)))
    replayable = [g for g in stored if not unreplayable_reason(g.report)]
    keys = choose([g.key for g in replayable], fraction, minimum)
    by_key = {g.key: g for g in replayable}
    chosen = [by_key[k] for k in keys]
    mismatches, counts = replay_sample(chosen, tasks, grade)
    summary: ReplaySummary = {
        "stored": len(stored),
        "stored_by_kind": dict(sorted(Counter(g.kind for g in stored).items())),
        "replayable": len(replayable),
        "excluded": dict(sorted(excluded.items())),
        "fraction": fraction,
        "minimum": minimum,
        "sampled": len(chosen),
        "sampled_by_kind": dict(sorted(Counter(g.kind for g in chosen).items())),
        "trees_graded": counts["trees"],
        "grading_attempts": counts["attempts"],
        "identical": len(chosen) - len(mismatches),
        "mismatches": mismatches,
        "sample": [{"key": g.key, "source": g.source} for g in chosen],
        "grader": dict(grader),
        "segment_graders": segment_graders(segments, grader),
    }
    if mismatches:
        raise ReplayMismatch(_message(mismatches, len(chosen)), summary)
    return summary


def replay_job(
    *,
    segments: Sequence[str],
    tasks_path: str,
    out: str,
    sandbox: dict[str, Any],
    grading: Mapping[str, Any],
    replay: Mapping[str, Any],
    config: Any,
) -> ReplaySummary:
    """Rule replay: ``results/replay/summary.json`` (with provenance), or a failure naming
    every mismatch with both reports."""
    from editcredit.data.freeze import load_tasks
    from editcredit.io.provenance import write_result_json
    from editcredit.sandbox.factory import make_sandbox

    tasks = {t.instance_id: t for t in load_tasks(tasks_path)}
    f_weight, g_weight = float(grading["f_weight"]), float(grading["g_weight"])
    identity = grader_identity(sandbox)
    box = make_sandbox(sandbox["backend"], sandbox)
    try:
        summary = replay_study(
            segments,
            tasks,
            lambda task, patch: grade_patch(task, patch, box, f_weight, g_weight),
            float(replay["fraction"]),
            int(replay["minimum"]),
            identity,
        )
    finally:
        box.close()
    print(
        f"replay: {summary['identical']} of {summary['sampled']} re-graded stored gradings "
        f"identical ({summary['stored']} stored, {summary['trees_graded']} trees graded)"
    )
    write_result_json(out, summary, [*segments, tasks_path], config)
    return summary
