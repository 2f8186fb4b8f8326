"""The training loop's hooks: what a segment does around each step besides the step itself.

A segment (:func:`editcredit.rl.segment.train_segment`) calls its callbacks in the order the
job registered them, as nested context managers wrap a block: ``on_train_begin`` and
``on_step_begin`` in that order, ``on_step_end`` and ``on_train_end`` in reverse, so a hook
registered first opens first and closes last. A callback stops the segment by raising (its
receipt written first: :class:`~editcredit.storage.monitor.StorageLow`,
:class:`~editcredit.protocol.budget.BudgetExceeded`,
:class:`~editcredit.rl.gates.UpdateGateFailed`); nothing of the segment is written then.

The job registers :func:`segment_callbacks`: the storage guard, the budget guard, the early
update gate and the live scalars, in that order. So before a step the disk is read, then the
budget checked, then the parameters copied for the gate; after it the scalars are written,
then the gate decides, then the budget adds the step's cost.

The no-learning control (:func:`editcredit.rl.control.replay_control`) replays steps with no
trainer: it registers the budget guard alone, with the replay's cost of a step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import torch

from editcredit.protocol.budget import BudgetGuard
from editcredit.rl.config import TrainConfig
from editcredit.rl.gates import UpdateCheck, enforce_update_gate, gated_update, update_check
from editcredit.rl.scalars import ScalarLog
from editcredit.storage.monitor import StorageMonitor

if TYPE_CHECKING:
    from editcredit.rl.records import MetricsRow
    from editcredit.rl.segment import SegmentSpec, StepRecords, Trainer


@dataclass
class StepState:
    """What a callback sees of a step: its number, the trainer (None in a replay, which trains
    nothing), the segment's metrics rows so far and, once the step has run, its records (None
    before)."""

    step: int
    trainer: Trainer | None
    metrics: list[MetricsRow]
    records: StepRecords | None = None

    def done(self) -> StepRecords:
        """The step's records (an ``on_step_end`` hook's: the step has run)."""
        if self.records is None:
            raise RuntimeError(f"step {self.step}: no records before the step has run")
        return self.records

    def training(self) -> Trainer:
        """The trainer of the step (a hook that needs the parameters: a training step)."""
        if self.trainer is None:
            raise RuntimeError(f"step {self.step}: no trainer (a replayed step)")
        return self.trainer


#: a step's spend against a budget and its attempts that failed on infrastructure, from the
#: step's state once it has run and its wall seconds
StepCost = Callable[[StepState, float], tuple[dict[str, float], int]]


def training_step_cost(state: StepState, seconds: float) -> tuple[dict[str, float], int]:
    """A training step's cost (:func:`editcredit.rl.segment.step_cost` of its records)."""
    from editcredit.rl.segment import step_cost

    records = state.done()
    return step_cost(records.rows, records.ledger, records.metrics, seconds)


class StepCallback(Protocol):
    """A hook of the training loop (TRL's ``TrainerCallback``, in the few events a segment
    has)."""

    def on_train_begin(self) -> None: ...

    def on_step_begin(self, state: StepState) -> None: ...

    def on_step_end(self, state: StepState) -> None: ...

    def on_train_end(self) -> None: ...


class Callback:
    """A callback that does nothing at every event (a hook overrides the events it uses)."""

    def on_train_begin(self) -> None:
        return None

    def on_step_begin(self, state: StepState) -> None:
        return None

    def on_step_end(self, state: StepState) -> None:
        return None

    def on_train_end(self) -> None:
        return None


@dataclass
class StorageGuard(Callback):
    """Reads the free disk and inodes before each step: below the floor (beyond the
    checkpoint bytes ``need_bytes`` the segment will write) the monitor writes its receipt
    under ``logs/storage/`` and raises :class:`~editcredit.storage.monitor.StorageLow`."""

    monitor: StorageMonitor
    need_bytes: int

    def on_step_begin(self, state: StepState) -> None:
        self.monitor.check(f"before step {state.step}", need_bytes=self.need_bytes)


@dataclass
class BudgetStepGuard(Callback):
    """Checks each step against the run's budget before it runs (a cap the step would cross
    raises :class:`~editcredit.protocol.budget.BudgetExceeded` with its receipt) and adds its
    cost (``cost``, with its wall seconds: :func:`training_step_cost` for a training step) once
    it has run."""

    guard: BudgetGuard
    cost: StepCost = training_step_cost
    _started: float = field(default=0.0, init=False, repr=False)

    def on_step_begin(self, state: StepState) -> None:
        self.guard.check(state.step)
        self._started = time.monotonic()

    def on_step_end(self, state: StepState) -> None:
        wall = time.monotonic() - self._started
        self.guard.add(*self.cost(state, wall))


@dataclass
class UpdateGate(Callback):
    """The early update gate (METHOD §5): each of the run's first updates of an arm with
    counterfactual credit (:func:`~editcredit.rl.gates.gated_update`) is checked as soon as it
    is taken against a copy of the parameters before it; a failed one raises
    :class:`~editcredit.rl.gates.UpdateGateFailed` at once. ``updates`` holds the checks, for
    the segment's receipt."""

    run: str
    arm: str
    seed: int
    updates: list[UpdateCheck] = field(default_factory=list)
    _before: dict[str, torch.Tensor] | None = field(default=None, init=False, repr=False)

    def on_step_begin(self, state: StepState) -> None:
        gated = gated_update(self.arm, state.step)
        self._before = state.training().snapshot() if gated else None

    def on_step_end(self, state: StepState) -> None:
        if self._before is None:
            return
        moved = state.training().moved_since(self._before)
        self.updates.append(update_check(state.step, state.done().metrics, moved))
        self._before = None
        enforce_update_gate(self.run, self.arm, self.seed, self.updates, state.metrics)


@dataclass
class ScalarLogger(Callback):
    """Each step's metrics row and phase seconds as live TensorBoard scalars
    (:class:`~editcredit.rl.scalars.ScalarLog`, one event file per segment attempt under
    ``logdir``), opened when training begins and closed when it ends."""

    logdir: Path
    first_step: int
    last_step: int
    _log: ScalarLog | None = field(default=None, init=False, repr=False)

    def on_train_begin(self) -> None:
        self._log = ScalarLog(self.logdir, self.first_step, self.last_step)

    def on_step_end(self, state: StepState) -> None:
        if self._log is not None:
            records = state.done()
            self._log.write(state.step, {**records.metrics, **records.seconds})

    def on_train_end(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def segment_callbacks(
    spec: SegmentSpec,
    cfg: TrainConfig,
    budget: BudgetGuard | None = None,
    storage: tuple[StorageMonitor, int] | None = None,
) -> list[StepCallback]:
    """A training segment's callbacks in their order: the storage guard (a monitor and the
    checkpoint bytes the segment will write), the budget guard, the early update gate, the
    live scalars (``runs/{run}/tensorboard``)."""
    callbacks: list[StepCallback] = []
    if storage is not None:
        callbacks.append(StorageGuard(*storage))
    if budget is not None:
        callbacks.append(BudgetStepGuard(budget))
    callbacks.append(UpdateGate(spec.run, cfg.arm, cfg.seed))
    last = spec.start_step + spec.steps
    logdir = Path(spec.out_dir).parent / "tensorboard"
    callbacks.append(ScalarLogger(logdir, spec.start_step + 1, last))
    return callbacks


def budget_of(callbacks: Sequence[StepCallback]) -> BudgetGuard | None:
    """The budget the callbacks guard the segment with (None: no budget guard)."""
    guards = [c.guard for c in callbacks if isinstance(c, BudgetStepGuard)]
    return guards[0] if guards else None


def updates_of(callbacks: Sequence[StepCallback]) -> list[UpdateCheck]:
    """The early updates the callbacks' gate checked (none: no gate)."""
    return [u for c in callbacks if isinstance(c, UpdateGate) for u in c.updates]
