"""Typed records of evaluation: attempts, slots, per-task slot files and ``slots.parquet``.

An :class:`Attempt` is one generation or grading of one slot, kept whatever its outcome: its
identity (slot, index), kind, seed, trajectory reference, patch, report summary, infrastructure
evidence and timestamps. A slot's state is what the ledger decides from its attempts.

The journal keeps each attempt as it happened; a slot file stores it as :func:`stored_attempt`
makes it: no timestamps or wall seconds (they go to the job's volatile sidecar), and the
grading report and infrastructure evidence without what the clock, the run's sentinels or the
machine decide (``grading.stored_report``), so that evaluating again writes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from editcredit.evaluation.ledger import (
    AttemptKind,
    AttemptView,
    LedgerError,
    Limits,
    Outcome,
    check_history,
)
from editcredit.grading.stored_report import stable_log_tail, stable_sandbox
from editcredit.io.provenance import PARQUET_KEY

SLOTS_SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("evalset", pa.string()),
        ("instance_id", pa.string()),
        ("sample", pa.int16()),
        ("verdict", pa.int8()),
        ("state", pa.string()),
        ("reason", pa.string()),
        ("attempts", pa.int16()),
        ("detail", pa.string()),
    ]
)


class SlotRow(TypedDict):
    """One row of ``slots.parquet`` (:data:`SLOTS_SCHEMA`): one slot's final state."""

    model: str  # the eval model (``base``, a run, ``{run}-step{N}``)
    evalset: str
    instance_id: str  # the task
    sample: int  # the slot's sample index
    verdict: int | None  # 1, 0, or None while unresolved
    state: str  # ``decided`` or ``unresolved``
    reason: str  # the ledger's reason for the state
    attempts: int  # attempts made at the slot
    detail: str  # the deciding attempt's reason ('' when none decided)


class TrajectoryRef(BaseModel):
    """Where a generation attempt's token-level trajectory lies: a Parquet file and row."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    row: int
    rollout_key: str


class Attempt(BaseModel):
    """One attempt at one slot (a journal line and an entry of the slot file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    sample: int
    index: int
    kind: AttemptKind
    outcome: Outcome
    of: int | None = None
    seed: int | None = None
    rollout_key: str | None = None
    trajectory: TrajectoryRef | None = None
    end_reason: str = ""
    patch: str | None = None
    patch_sha256: str | None = None
    verdict: int | None = None
    verdict_kind: str = ""
    reason: str = ""
    report: dict[str, Any] | None = None
    evidence: dict[str, Any] = {}
    sandbox_runs: int = 0
    started: str
    finished: str
    seconds: float

    @property
    def slot(self) -> tuple[str, int]:
        return (self.instance_id, self.sample)

    def view(self) -> AttemptView:
        return AttemptView(self.kind, self.outcome, self.verdict, self.verdict_kind, self.of)


class SlotRecord(BaseModel):
    """One slot: its final state, verdict (1, 0 or null), reason and every attempt."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sample: int
    state: Literal["decided", "unresolved"]
    verdict: int | None
    reason: str
    detail: str
    decided_by: int | None
    attempts: list[Attempt]


class TaskSlots(BaseModel):
    """``results/eval/{model}/{evalset}/{task}.json``: every slot of one task."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str
    evalset: str
    instance_id: str
    task_sha256: str
    suite: str
    run: str
    step: int
    diagnostic: bool
    plan_sha256: str
    plan_version: int
    slice_sha256: str
    model_sha256: str
    journal: str
    limits: dict[str, int]
    slots: list[SlotRecord]


def slot_record(sample: int, attempts: Sequence[Attempt], limits: Limits, where: str):
    """The final record of a slot; an error when the ledger still wants an attempt."""
    decision = check_history([a.view() for a in attempts], limits, where)
    if not decision.final:
        raise LedgerError(f"{where}: not final, the ledger still asks for a {decision.action}")
    deciding = attempts[decision.of] if decision.of is not None else None
    detail = deciding.reason if deciding is not None else ""
    return SlotRecord(
        sample=sample,
        state=decision.state,
        verdict=decision.verdict,
        reason=decision.reason,
        detail=detail,
        decided_by=decision.of,
        attempts=list(attempts),
    )


#: an attempt's fields the clock decides (the volatile sidecar's, not the slot file's)
ATTEMPT_TIMES = ("started", "finished", "seconds")


class _AttemptTimesCore(TypedDict):
    instance_id: str
    sample: int
    index: int  # the attempt's index in its slot
    started: str  # ISO timestamps
    finished: str
    seconds: float  # its wall seconds


class AttemptTimes(_AttemptTimesCore, total=False):
    """What the clock decided of one attempt (an entry of ``slots.volatile.json``): its slot and
    index, its times, and those of the sandbox run that graded it or failed."""

    sandbox_seconds: float  # the grading's sandbox run, seconds
    sandbox_timings: dict[str, float]  # ... by phase
    evidence_seconds: float  # an infrastructure failure's run, seconds


def _stable_report(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A report summary (``attempts.report_summary``) without its volatile facts, and those."""
    sandbox = report.get("sandbox")
    if sandbox is None:
        return report, {}
    stable = stable_sandbox(sandbox)
    if "observations" not in sandbox:  # the summary keeps counts ("observed") instead
        stable.pop("observations", None)
    timed = {k: sandbox[k] for k in ("seconds", "timings") if k in sandbox}
    return {**report, "sandbox": stable}, timed


def stored_attempt(attempt: Attempt) -> tuple[dict[str, Any], AttemptTimes]:
    """What a slot file stores of an attempt, and its volatile facts (the sidecar's): the
    timestamps and wall seconds, the sandbox run's seconds and timings; the report's and the
    evidence's log tails are normalized (``stable_log_tail``). The body is :class:`Attempt`'s
    JSON (its typed record) less those facts."""
    body = attempt.model_dump(mode="json")
    started, finished, seconds = (body.pop(k) for k in ATTEMPT_TIMES)
    times: AttemptTimes = {
        "instance_id": body["instance_id"],
        "sample": body["sample"],
        "index": body["index"],
        "started": started,
        "finished": finished,
        "seconds": seconds,
    }
    if body.get("report"):
        body["report"], timed = _stable_report(body["report"])
        if "seconds" in timed:
            times["sandbox_seconds"] = timed["seconds"]
        if "timings" in timed:
            times["sandbox_timings"] = timed["timings"]
    evidence = dict(body.get("evidence") or {})
    if "seconds" in evidence:
        times["evidence_seconds"] = evidence.pop("seconds")
    for key in ("log_tail", "exception"):
        if isinstance(evidence.get(key), str):
            evidence[key] = stable_log_tail(evidence[key])
    body["evidence"] = evidence
    return body, times


def stored_task_slots(f: TaskSlots) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A slot file's body (:class:`TaskSlots`'s JSON, every attempt as :func:`stored_attempt`
    stores it) and the volatile facts of its attempts (each an :class:`AttemptTimes`)."""
    body = f.model_dump(mode="json")
    volatile: list[dict[str, Any]] = []
    for slot, record in zip(body["slots"], f.slots, strict=True):
        stored = [stored_attempt(a) for a in record.attempts]
        slot["attempts"] = [b for b, _ in stored]
        volatile += [cast(dict[str, Any], v) for _, v in stored]
    return body, volatile


def slots_rows(model: str, evalset: str, files: Sequence[TaskSlots]) -> list[SlotRow]:
    return [
        {
            "model": model,
            "evalset": evalset,
            "instance_id": f.instance_id,
            "sample": s.sample,
            "verdict": s.verdict,
            "state": s.state,
            "reason": s.reason,
            "attempts": len(s.attempts),
            "detail": s.detail,
        }
        for f in files
        for s in f.slots
    ]


def write_slots_parquet(
    rows: Sequence[Mapping[str, Any]], path: str | Path, block: Mapping[str, Any]
) -> None:
    """The table with the provenance block in its schema metadata (as write_result_parquet)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {PARQUET_KEY: json.dumps(dict(block), sort_keys=True).encode()}
    table = pa.Table.from_pylist(list(rows), schema=SLOTS_SCHEMA).replace_schema_metadata(meta)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)
