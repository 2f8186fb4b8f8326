"""Run the slots of one model on one eval set to their final state, resuming from the journal.

Rounds until the ledger asks for nothing more: every slot's next step is computed from its
journaled attempts; pending gradings go to a thread pool at once (a re-grade the ledger allows
follows its failed grading in the same thread), pending generations are made in batches across
tasks (each batch's patches are handed to the graders as soon as it is journaled, so grading
overlaps the next batch's generation); replacement generations wait for the next round.
A decided slot gets no attempt; an attempt counts once its journal line is durable, so an
interrupted job loses at most the attempts in flight and never grades a decided slot again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from editcredit.agent.environments import EnvironmentMaker
from editcredit.agent.rollout import RolloutConfig
from editcredit.data.task import Task
from editcredit.evaluation.attempts import GenJob, generate_batch, grade_attempt
from editcredit.evaluation.journal import Journal, JournalError
from editcredit.evaluation.ledger import (
    GENERATION_KINDS,
    GRADING_KINDS,
    AttemptKind,
    Decision,
    Limits,
    check_history,
    next_step,
)
from editcredit.evaluation.slots import Attempt
from editcredit.evaluation.spend import attempts_cost, journal_spend
from editcredit.progress import Progress
from editcredit.protocol.budget import GRADING, STEP, BudgetGuard

Slot = tuple[str, int]
ACTIVE = GENERATION_KINDS + GRADING_KINDS  # a slot whose next step is one of these is not done
#: Environment steps run in this many threads per sandbox. A step whose tree another step is
#: testing waits for that run in the grading memo without holding a sandbox, so with one thread
#: per sandbox the other sandbox idled; the steps' results do not depend on the threads
#: (the same trajectories: benchmarks/bench_eval_slots.py, docs/speed.md).
STEP_THREADS_PER_SANDBOX = 2


@dataclass(frozen=True)
class SliceSettings:
    """How the slots of one (model, eval set) are attempted."""

    model: str
    evalset: str
    rollout: RolloutConfig
    environment: EnvironmentMaker
    f_weight: float  # config grading.f_weight and grading.g_weight (METHOD §3)
    g_weight: float
    limits: Limits  # config evaluation.limits, .seed and .batch_size
    seed: int
    batch_size: int
    workers: int  # sandboxes and grading threads: config sandbox.eval_workers


@dataclass
class RunStats:
    """What this run did (not what the journal held before): attempts by kind, wall times."""

    attempts: dict[str, int] = field(default_factory=dict)
    resumed_attempts: int = 0
    rounds: int = 0
    batches: int = 0
    generation_seconds: float = 0.0
    grading_seconds_summed: float = 0.0
    seconds: float = 0.0
    policy_loaded: bool = False

    def count(self, attempt: Attempt) -> None:
        self.attempts[attempt.kind] = self.attempts.get(attempt.kind, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempts": dict(sorted(self.attempts.items())),
            "resumed_attempts": self.resumed_attempts,
            "rounds": self.rounds,
            "batches": self.batches,
            "generation_seconds": round(self.generation_seconds, 3),
            "grading_seconds_summed": round(self.grading_seconds_summed, 3),
            "seconds": round(self.seconds, 3),
            "policy_loaded": self.policy_loaded,
        }


def _chunks(items: Sequence[Any], size: int):
    for i in range(0, len(items), max(1, size)):
        yield items[i : i + size]


def run_slots(
    slots: Sequence[Slot],
    tasks: Mapping[str, Task],
    settings: SliceSettings,
    journal: Journal,
    sandbox,
    load_policy: Callable[[], tuple[Any, Any]],
    trajectory_dir: str | Path,
    log: Callable[[str], None] = print,
    before_batch: Callable[[str], Any] | None = None,
    budget: BudgetGuard | None = None,
) -> tuple[dict[Slot, list[Attempt]], RunStats]:
    """Attempt every slot until final; return each slot's attempts (old and new) and stats.

    ``load_policy()`` returns ``(generator, chat)``; it is called only when a generation is
    needed (a rerun with every slot decided loads no model). ``sandbox`` needs ``grade``.
    ``before_batch(where)`` runs before each round and each generation batch (the storage
    monitor: it raises to stop the job; journaled attempts stay for the next run).
    With a ``budget``, each generation batch (a step) and each grading is checked before it
    starts and its cost added once journaled; a cap it would cross raises
    :class:`~editcredit.protocol.budget.BudgetExceeded` (the attempts journaled so far stay
    in the journal; nothing else is written).
    """
    start = time.monotonic()
    stats = RunStats()
    history = journal.replay()
    stray = sorted(set(history) - set(slots))
    if stray:
        raise JournalError(f"{journal.path}: attempts for unplanned slots, e.g. {stray[0]}")
    for slot in slots:
        history.setdefault(slot, [])
        check_history([a.view() for a in history[slot]], settings.limits, f"{journal.path}: {slot}")
    stats.resumed_attempts = sum(len(v) for v in history.values())
    if budget is not None and stats.resumed_attempts:
        budget.resume(*journal_spend(history))  # the evaluation's budget counts them
    if journal.torn_lines:
        log(f"journal: skipped {journal.torn_lines} torn line(s) (attempts cut by a crash)")
    lock = threading.Lock()
    policy: list[tuple[Any, Any]] = []

    def decide(slot: Slot) -> Decision:
        with lock:
            views = [a.view() for a in history[slot]]
        return next_step(views, settings.limits)

    def record(attempts: Sequence[Attempt]) -> None:
        journal.append(attempts)
        with lock:
            for a in attempts:
                history[a.slot].append(a)
                stats.count(a)
                if a.kind in GRADING_KINDS:
                    stats.grading_seconds_summed += a.seconds

    def spend(attempts: Sequence[Attempt], unit: str) -> None:
        if budget is not None:
            cost, infra = attempts_cost(attempts)
            budget.add({**cost, "wall_seconds": budget.lap()}, infra, unit)

    def grade_one(slot: Slot, decision: Decision) -> None:
        """Grade, and re-grade at once when the ledger allows it (no wait for a new round)."""
        while decision.action in GRADING_KINDS:
            # a grade or regrade decision names the generation it grades (``of``)
            with lock:
                generation = history[slot][cast(int, decision.of)]
                index = len(history[slot])
            if budget is not None:
                budget.check(f"grading of {slot[0]} sample {slot[1]}", unit=GRADING)
            attempt = grade_attempt(
                tasks[slot[0]],
                generation,
                index,
                cast(AttemptKind, decision.action),  # a grading kind: the loop's condition
                sandbox,
                settings.f_weight,
                settings.g_weight,
            )
            record([attempt])
            spend([attempt], GRADING)
            decision = decide(slot)

    limit_rounds = 3 + 2 * (settings.limits.regenerate + settings.limits.regrade + 1)

    def settled() -> int:  # slots with nothing left to do (the progress line's count)
        return sum(decide(s).action not in ACTIVE for s in slots)

    label = f"eval {settings.model}/{settings.evalset}"
    with Progress(label, len(slots), "slots", count=settled) as progress:
        while True:
            decisions = {s: decide(s) for s in slots}
            gens = [
                GenJob(s[0], s[1], len(history[s]), cast(AttemptKind, d.action))
                for s, d in decisions.items()
                if d.action in GENERATION_KINDS
            ]
            grades = [(s, d) for s, d in decisions.items() if d.action in GRADING_KINDS]
            if not gens and not grades:
                break
            stats.rounds += 1
            if stats.rounds > limit_rounds:  # pragma: no cover - the ledger is finite
                raise RuntimeError(f"evaluation did not settle after {limit_rounds} rounds")
            if before_batch is not None:
                before_batch(f"before round {stats.rounds}")
            log(
                f"round {stats.rounds}: {len(gens)} generation(s), {len(grades)} grading(s) pending"
            )
            batches = -(-len(gens) // max(1, settings.batch_size))
            progress.update(detail=f"round {stats.rounds}: starting")
            with ThreadPoolExecutor(settings.workers, thread_name_prefix="grade") as pool:
                futures: list[Future] = [pool.submit(grade_one, s, d) for s, d in grades]
                if gens and not policy:
                    policy.append(load_policy())
                    stats.policy_loaded = True
                for number, batch in enumerate(_chunks(gens, settings.batch_size), start=1):
                    if before_batch is not None:
                        before_batch(f"before round {stats.rounds} batch {number}")
                    progress.update(detail=f"round {stats.rounds}: batch {number}/{batches}")
                    if budget is not None:
                        budget.check(f"evaluation batch {number} of round {stats.rounds}")
                    clock = time.monotonic()
                    attempts = generate_batch(
                        batch,
                        tasks,
                        *policy[0],
                        settings.rollout,
                        settings.seed,
                        settings.model,
                        settings.evalset,
                        sandbox,
                        Path(trajectory_dir),
                        settings.environment,
                        step_workers=STEP_THREADS_PER_SANDBOX * settings.workers,
                    )
                    record(attempts)
                    spend(attempts, STEP)
                    stats.generation_seconds += time.monotonic() - clock
                    stats.batches += 1
                    failed = sum(a.outcome == "infra_failure" for a in attempts)
                    log(
                        f"  batch {number}: {len(batch)} episode(s) in "
                        f"{time.monotonic() - clock:.1f}s, {failed} infrastructure failure(s)"
                    )
                    for a in attempts:
                        d = decide(a.slot)
                        if d.action in GRADING_KINDS:
                            futures.append(pool.submit(grade_one, a.slot, d))
                progress.update(detail=f"round {stats.rounds}: grading")
                for future in futures:
                    future.result()
    stats.seconds = time.monotonic() - start
    return history, stats
