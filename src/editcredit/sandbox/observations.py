"""Typed records of what the observer plugin saw, read from its JSON-lines file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["passed", "failed", "skipped"]


class PhaseRecord(BaseModel):
    """One setup/call/teardown report of one collected item."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    when: Literal["setup", "call", "teardown"]
    outcome: Outcome
    wasxfail: bool = False
    xfail_not_run: bool = False
    xpass_strict: bool = False
    message: str = ""
    duration: float = 0.0


class ItemObservation(BaseModel):
    """All phase reports of one collected item (a node id collected twice is two items)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nodeid: str
    phases: list[PhaseRecord]


class Observations(BaseModel):
    """Everything the plugin recorded in one test session (a run continued after a per-test
        timeout is several segments; ``finished``, ``returned`` and ``machinery`` are the last
        segment's). ``finished``: the session's finish hook ran; ``returned``: pytest.main
        returned to the runner (not an ``os._exit`` from inside the tests); ``tampering``: what the
        observer found changed in pytest's reporting machinery. ``aliases``: other names of an item
    (a unittest test's docstring line), by node id."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    started: bool
    finished: bool
    exitstatus: int | None = None
    items: list[ItemObservation] = []
    collect_errors: list[dict[str, str]] = []
    foreign_lines: int = 0
    returned: bool = False
    machinery: str = ""
    tampering: list[str] = []
    segments: int = 0
    aliases: dict[str, list[str]] = {}


def read_observations(path: Path, nonce: str) -> Observations:
    """Parse the plugin's file; lines without the run's nonce are counted, never trusted."""
    if not path.exists():
        return Observations(started=False, finished=False)
    started = finished = returned = False
    exitstatus, machinery, segments = None, "", 0
    tampering: list[str] = []
    items: list[ItemObservation] = []
    open_items: dict[str, int] = {}
    collect_errors: list[dict[str, str]] = []
    pending: dict[str, int] = {}  # started, no phase reported since
    aliases: dict[str, list[str]] = {}
    foreign = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            foreign += 1
            continue
        if not isinstance(rec, dict) or rec.get("nonce") != nonce:
            foreign += 1
            continue
        event = rec.get("event")
        if event == "segment":
            segments += 1
            finished = returned = False
        elif event == "session_start":
            started = True
        elif event == "session_finish":
            finished, exitstatus = True, rec.get("exitstatus")
            machinery = str(rec.get("machinery", ""))
        elif event == "main_returned":
            returned = True
        elif event == "tampering":
            tampering += [str(w) for w in rec.get("what", [])]
        elif event == "collect_error":
            collect_errors.append({"nodeid": rec["nodeid"], "message": rec.get("message", "")})
        elif event == "alias":
            names = aliases.setdefault(str(rec.get("nodeid", "")), [])
            if str(rec.get("alias", "")) not in names:
                names.append(str(rec.get("alias", "")))
        elif event == "item_start":
            pending[str(rec.get("nodeid", ""))] = 1
        elif event == "phase":
            phase = PhaseRecord(**{k: rec[k] for k in PhaseRecord.model_fields if k in rec})
            nodeid = rec["nodeid"]
            pending.pop(nodeid, None)
            if phase.when == "setup" or nodeid not in open_items:
                open_items[nodeid] = len(items)
                items.append(ItemObservation(nodeid=nodeid, phases=[]))
            items[open_items[nodeid]].phases.append(phase)
    # a test that started and reported nothing (the process ended in it): incomplete
    items += [ItemObservation(nodeid=n, phases=[]) for n in pending if n]
    return Observations(
        started=started,
        finished=finished,
        exitstatus=exitstatus,
        items=items,
        collect_errors=collect_errors,
        foreign_lines=foreign,
        returned=returned,
        machinery=machinery,
        tampering=tampering,
        segments=segments,
        aliases=aliases,
    )
