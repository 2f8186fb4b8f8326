"""Budgets declared before a job starts, checked before each unit of work (METHOD §11).

A :class:`Budget` caps what a job or a study may spend: ``steps`` (units of work), generated
``tokens``, sandbox ``gradings``, ``gpu_hours`` and ``wall_seconds`` (0: no cap). A
:class:`BudgetGuard` carries what was spent so far (earlier segments of the run included) and,
before each unit (a training or replay step, an evaluation batch, an expert batch or an SFT
chunk; a grading), projects the unit's cost as the largest unit of that kind measured so far;
when spent plus projection would cross a cap it writes a receipt under ``logs/budgets/`` and
raises :class:`BudgetExceeded`: the job stops there, never truncating silently, and writes no
partial output. Attempts that failed on infrastructure are counted apart from the spend
(``infra_failures``), so the ledger shows them beside the budget.

A study's budget holds for all of its jobs together: their guards share a :class:`StudyLedger`
(``logs/budgets/{study}.ledger.jsonl``), one appended line per unit of any job attempt, read and
appended under an exclusive file lock; each guard checks the ledger's sum before each unit.

The caps never decide how far a result trains: a job either completes within its budget, with
the same bytes as without one, or stops with a receipt and no output.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from editcredit.io.atomic import atomic_write_text
from editcredit.layout import BUDGET_DIR, SPEND_RECORDS, study_ledger

#: the spend a budget can cap, in the order receipts list them
COST_KEYS = ("steps", "tokens", "gradings", "gpu_hours", "wall_seconds")
DEFAULT_RECEIPT_DIR = Path(BUDGET_DIR)
#: the default unit of work (a training or replay step); every unit but a grading counts a step
STEP = "step"
#: a grading checked on its own (beside an evaluation's batches): it counts no step
GRADING = "grading"


class StudySpend(TypedDict):
    """What a study's jobs spent together, in a guard's ledger when its caps are the study's."""

    ledger: str  # the study's ledger file (logs/budgets/{study}.ledger.jsonl)
    spent: dict[str, float]  # every job's spend, by cost key
    infra_failures: int  # every job's attempts that failed on infrastructure
    attempt: str  # this job attempt's name in the ledger (host, pid, random)


class _BudgetLedgerCore(TypedDict):
    scope: str  # the job the guard guards (e.g. ``O-s42``, ``control-s42``)
    budget: dict[str, float]  # the caps, by cost key (0: uncapped)
    spent: dict[str, float]  # this job's spend, by cost key (a receipt may drop the timed ones)
    infra_failures: int  # this job's attempts that failed on infrastructure, apart


class BudgetLedger(_BudgetLedgerCore, total=False):
    """A guard's budget beside its spend (:meth:`BudgetGuard.ledger`): in a job's receipt (its
    timed costs split off, :func:`split_ledger`), a spend record and a stop receipt."""

    study: StudySpend  # with a study's shared ledger


class CrossedCap(TypedDict):
    """A cap the next unit would cross: the cap, the spend so far and the spend after it."""

    cap: float
    spent: float
    projected: float


class BudgetStopReceipt(BudgetLedger):
    """The receipt of a stop (``logs/budgets/{scope}-{time}-{pid}.json``, sorted keys): the
    ledger, the unit it stopped before and the caps that unit would cross."""

    stopped_before_step: int | str  # the step's number, or the unit's name (``grading 3``)
    unit: str  # the unit's kind (:data:`STEP`, :data:`GRADING`, ...)
    crossed: dict[str, CrossedCap]  # by cost key


def _steps_of(unit: str) -> float:
    return 0.0 if unit == GRADING else 1.0


class BudgetExceeded(RuntimeError):
    """A cap would be crossed by the next unit; ``receipt`` is the file that says so."""

    def __init__(self, message: str, receipt: Path) -> None:
        super().__init__(message)
        self.receipt = receipt


@dataclass(frozen=True)
class Budget:
    """Caps per cost key; 0 means no cap."""

    caps: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any] | None, where: str = "budget") -> Budget:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(COST_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown budget keys {unknown}; known {list(COST_KEYS)}")
        caps = {}
        for key, value in cfg.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{where}.{key}: a cap is a number >= 0 (0: none), got {value!r}")
            caps[key] = float(value)
        return cls(caps)

    def capped(self) -> dict[str, float]:
        return {k: v for k, v in self.caps.items() if v > 0}


def zero_cost() -> dict[str, float]:
    return dict.fromkeys(COST_KEYS, 0.0)


class StudyLedger:
    """A study's spend across all its jobs: an append-only JSON-lines file, one record per
    unit of work of a job attempt (``job``, ``attempt``, ``unit``, ``cost``,
    ``infra_failures``), read and appended under an exclusive ``fcntl`` lock, so parallel jobs
    neither lose nor double-count a unit. A line cut by a crash is skipped and counted
    (``torn_lines``); the next append starts on a fresh line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._spent = zero_cost()
        self._infra = 0
        self.torn_lines = 0
        self._lock = threading.Lock()

    @contextmanager
    def _locked(self) -> Iterator[Any]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path, "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield fh
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _catch_up(self, fh) -> None:
        """Add the complete lines appended since the last read."""
        fh.seek(self._offset)
        data = fh.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        for number, line in enumerate(data[:end].split(b"\n")):
            try:
                record = json.loads(line)
                cost = {k: float(record["cost"].get(k, 0.0)) for k in COST_KEYS}
                infra = int(record["infra_failures"])
            except (ValueError, KeyError, TypeError, AttributeError):
                self.torn_lines += 1
                print(f"{self.path}: skipped a line that is no ledger record (after {number})")
                continue
            for key in COST_KEYS:
                self._spent[key] += cost[key]
            self._infra += infra
        self._offset += end + 1

    def total(self) -> tuple[dict[str, float], int]:
        """What every job of the study has spent so far, and its infrastructure failures."""
        with self._locked() as fh:
            self._catch_up(fh)
            return dict(self._spent), self._infra

    def append(
        self, job: str, attempt: str, unit: str, cost: Mapping[str, float], infra: int
    ) -> None:
        """Record one unit of work of ``job`` (its ``attempt``); durable when this returns."""
        record = {
            "job": job,
            "attempt": attempt,
            "unit": unit,
            "cost": {k: float(cost.get(k, 0.0)) for k in COST_KEYS},
            "infra_failures": int(infra),
        }
        line = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
        with self._locked() as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() > 0:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":  # a torn line: keep it apart
                    line = b"\n" + line
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


class BudgetGuard:
    """What a job has spent against its budget; :meth:`check` before each unit of work.

    Thread-safe: an evaluation checks its batches and its gradings from several threads. Once
    a check has stopped the job, every later check raises again with the same receipt. With a
    ``shared`` study ledger, the caps apply to the study's spend (all its jobs), and each
    :meth:`add` appends the unit to that ledger."""

    def __init__(
        self,
        scope: str,
        budget: Budget,
        spent: Mapping[str, float] | None = None,
        infra_failures: int = 0,
        receipt_dir: str | Path = DEFAULT_RECEIPT_DIR,
        gpus: int = 0,
        shared: StudyLedger | None = None,
    ) -> None:
        self.scope = scope
        self.gpus = int(gpus)
        self.budget = budget
        self.spent = {**zero_cost(), **{k: float(v) for k, v in (spent or {}).items()}}
        self.infra_failures = int(infra_failures)
        self.largest: dict[str, dict[str, float]] = {}
        self.receipt_dir = Path(receipt_dir)
        self.shared = shared
        self.attempt = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._lock = threading.RLock()
        self._lap = time.monotonic()
        self._stopped: tuple[str, Path] | None = None

    def counted(self) -> tuple[dict[str, float], int]:
        """The spend the caps apply to: the study's (every job's) with a shared ledger, else
        this job's; and the infrastructure failures beside it."""
        if self.shared is not None:
            return self.shared.total()
        return dict(self.spent), self.infra_failures

    def projected(
        self, unit: str = STEP, spent: Mapping[str, float] | None = None
    ) -> dict[str, float]:
        """Spent so far (``spent``, else :meth:`counted`) plus one more unit as large as the
        largest of its kind (steps: +1, except for a grading)."""
        spent = spent if spent is not None else self.counted()[0]
        step = {**zero_cost(), **self.largest.get(unit, {}), "steps": _steps_of(unit)}
        return {k: spent[k] + step[k] for k in COST_KEYS}

    def check(self, step: int | str, unit: str = STEP) -> None:
        """Before ``step`` (a unit of kind ``unit``): raise :class:`BudgetExceeded` with a
        receipt when the projected spend would cross a cap."""
        with self._lock:
            if self._stopped is not None:
                raise BudgetExceeded(*self._stopped)
            spent, _ = self.counted()
            projected = self.projected(unit, spent)
            crossed: dict[str, CrossedCap] = {
                k: {"cap": cap, "spent": spent[k], "projected": projected[k]}
                for k, cap in self.budget.capped().items()
                if projected[k] > cap
            }
            if not crossed:
                return
            receipt = self._write_receipt(step, unit, crossed)
            names = ", ".join(
                f"{k} {v['projected']:g} > cap {v['cap']:g}" for k, v in crossed.items()
            )
            whose = f" (the study's spend, {self.shared.path})" if self.shared else ""
            message = (
                f"{self.scope}: the budget stops the job before {_unit_name(step)} "
                f"({names}{whose}); nothing of this job is kept; receipt {receipt}"
            )
            self._stopped = (message, receipt)
            raise BudgetExceeded(message, receipt)

    def add(self, cost: Mapping[str, float], infra_failures: int = 0, unit: str = STEP) -> None:
        """Record one unit's measured cost (``steps`` counts 1, 0 for a grading, when not
        given; ``gpu_hours`` is the wall time times the job's GPUs when not given)."""
        step = {
            **zero_cost(),
            "steps": _steps_of(unit),
            **{k: float(v) for k, v in cost.items()},
        }
        if "gpu_hours" not in cost:
            step["gpu_hours"] = step["wall_seconds"] * self.gpus / 3600.0
        unknown = sorted(set(step) - set(COST_KEYS))
        if unknown:
            raise ValueError(f"{self.scope}: unknown cost keys {unknown}")
        with self._lock:
            largest = self.largest.setdefault(unit, zero_cost())
            for key in COST_KEYS:
                self.spent[key] += step[key]
                largest[key] = max(largest[key], step[key])
            self.infra_failures += int(infra_failures)
            if self.shared is not None:
                self.shared.append(self.scope, self.attempt, unit, step, int(infra_failures))

    def resume(self, spent: Mapping[str, float], infra_failures: int = 0) -> None:
        """Count what earlier attempts of the same job spent (a resumed job), without taking
        it for the size of a unit."""
        with self._lock:
            for key, value in spent.items():
                if key not in COST_KEYS:
                    raise ValueError(f"{self.scope}: unknown cost key {key!r}")
                self.spent[key] += float(value)
            self.infra_failures += int(infra_failures)

    def lap(self) -> float:
        """Wall seconds since the previous lap (the guard's start first): the wall time of a
        unit when units overlap (gradings beside generation), so laps sum to the job's time."""
        with self._lock:
            now = time.monotonic()
            seconds, self._lap = now - self._lap, now
            return seconds

    def ledger(self) -> BudgetLedger:
        """Budget beside measured spend, and infrastructure failures apart."""
        out: BudgetLedger = {
            "scope": self.scope,
            "budget": dict(self.budget.caps),
            "spent": dict(self.spent),
            "infra_failures": self.infra_failures,
        }
        if self.shared is not None:
            spent, infra = self.shared.total()
            out["study"] = {
                "ledger": self.shared.path.as_posix(),
                "spent": spent,
                "infra_failures": infra,
                "attempt": self.attempt,
            }
        return out

    def _write_receipt(self, step: int | str, unit: str, crossed: dict[str, CrossedCap]) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        safe = self.scope.replace("/", "_")
        path = self.receipt_dir / f"{safe}-{stamp}-{os.getpid()}.json"
        n = 1
        while path.exists():  # a receipt is never overwritten
            path = self.receipt_dir / f"{safe}-{stamp}-{os.getpid()}-{n}.json"
            n += 1
        body: BudgetStopReceipt = {
            **self.ledger(),
            "stopped_before_step": step,
            "unit": unit,
            "crossed": crossed,
        }
        atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
        return path


def _unit_name(step: int | str) -> str:
    return f"step {step}" if isinstance(step, int) else str(step)


def job_guard(
    scope: str,
    caps: Mapping[str, Any] | None,
    where: str,
    *,
    gpus: int = 0,
    spent: Mapping[str, float] | None = None,
    infra_failures: int = 0,
    receipt_dir: str | Path = DEFAULT_RECEIPT_DIR,
) -> BudgetGuard:
    """The guard of one job under its own caps (config ``where``, named in errors)."""
    budget = Budget.from_mapping(caps, where=where)
    return BudgetGuard(scope, budget, spent, infra_failures, receipt_dir, gpus)


def study_guard(
    study: str,
    scope: str,
    caps: Mapping[str, Any] | None,
    *,
    gpus: int = 0,
    receipt_dir: str | Path = DEFAULT_RECEIPT_DIR,
) -> BudgetGuard:
    """The guard of one job of ``study``: the caps (config ``budgets.studies.{study}``) apply
    to what all of the study's jobs spent, summed in its ledger beside the receipts."""
    budget = Budget.from_mapping(caps, where=f"config budgets.studies.{study}")
    ledger = StudyLedger(Path(receipt_dir) / Path(study_ledger(study)).name)
    return BudgetGuard(scope, budget, receipt_dir=receipt_dir, gpus=gpus, shared=ledger)


def write_spend_record(guard: BudgetGuard, directory: str | Path = SPEND_RECORDS) -> Path:
    """The guard's ledger as the spend record of a job whose output holds no wall-clock
    figure: ``{directory}/{scope}-{time}-{pid}.json``, never overwritten."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    safe = guard.scope.replace("/", "_")
    path = Path(directory) / f"{safe}-{stamp}-{os.getpid()}.json"
    n = 1
    while path.exists():
        path = Path(directory) / f"{safe}-{stamp}-{os.getpid()}-{n}.json"
        n += 1
    atomic_write_text(path, json.dumps(guard.ledger(), indent=2, sort_keys=True) + "\n")
    return path


#: the cost keys the clock decides: a receipt keeps the ledger without them, and its volatile
#: sidecar holds them (``budget_spent``; ``editcredit.io.volatile``)
TIMED_COSTS = ("wall_seconds", "gpu_hours")


def split_ledger(ledger: BudgetLedger) -> tuple[BudgetLedger, dict[str, float]]:
    """A ledger (:meth:`BudgetGuard.ledger`) without its time spent, and that time spent
    (:data:`TIMED_COSTS`), so that a rebuilt result writes the same bytes."""
    spent = dict(ledger["spent"])
    timed = {k: spent.pop(k) for k in TIMED_COSTS if k in spent}
    return {**ledger, "spent": spent}, timed
