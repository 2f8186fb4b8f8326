"""The no-learning control of a training seed: the base policy replayed on the run's draws.

Every arm of a seed draws the same tasks at every step with the same sampling seeds (the cursor
and the group seeds depend on the seed and the step only). Replaying those steps with the base
policy, never updated, gives each step's pass rate had the trainer done nothing; a run's pass
rate minus the control's on the same draws is the trainer's effect, free of which tasks happened
to be drawn (common random numbers). A trainer that makes the policy worse shows up as a
negative difference (METHOD §5, training health).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from editcredit.data.task import Task
from editcredit.layout import control_run_name
from editcredit.progress import Progress
from editcredit.protocol.budget import BudgetGuard
from editcredit.records import Arm
from editcredit.rl.config import TrainConfig
from editcredit.rl.cursor import DataCursor
from editcredit.rl.records import RolloutRow
from editcredit.rl.segment import play_step, step_cost
from editcredit.rl.step_callbacks import BudgetStepGuard, StepCallback, StepState
from editcredit.rl.workers import WorkerPool


def replay_cost(rows: Sequence[Mapping[str, Any]], seconds: float) -> tuple[dict[str, float], int]:
    """One replayed step's spend (tokens, gradings with the visible runs, wall seconds) and
    its masked rollouts, counted as a training step's are (no counterfactual queries)."""
    tokens = sum(sum(r["loss_mask"]) for r in rows)
    return step_cost(rows, [], {"generated_tokens": tokens, "cf_sent": 0}, seconds)


@dataclass
class ReplayedStep:
    """The rollout rows of the step just replayed: what the budget guard's cost of a replayed
    step reads (a replay has no trainer and no step records)."""

    rows: list[RolloutRow] = field(default_factory=list)

    def cost(self, state: StepState, seconds: float) -> tuple[dict[str, float], int]:
        return replay_cost(self.rows, seconds)


def replay_callbacks(budget: BudgetGuard | None, played: ReplayedStep) -> list[StepCallback]:
    """The control replay's hooks: the training loop's budget guard alone (when a budget is
    given), costing each step as :func:`replay_cost` does."""
    return [] if budget is None else [BudgetStepGuard(budget, played.cost)]


def replay_control(
    cfg: TrainConfig,
    steps: int,
    pool: list[Task],
    workers: WorkerPool,
    log=print,
    budget: BudgetGuard | None = None,
) -> list[RolloutRow]:
    """Rollout rows of steps ``1..steps`` played by the workers' (base) weights on the draws of
    ``cfg.seed``. ``cfg.arm`` must query no counterfactual (the control trains nothing).
    With a ``budget``, the training loop's budget guard
    (:class:`~editcredit.rl.step_callbacks.BudgetStepGuard`) checks each step before it is
    played; a cap it would cross raises :class:`~editcredit.protocol.budget.BudgetExceeded`
    (its receipt under ``logs/budgets/``)."""
    if cfg.arm != Arm.O:
        raise ValueError(f"the control replays arm O's draws, not arm {cfg.arm!r}")
    by_id = {t.instance_id: t for t in pool}
    cursor = DataCursor(cfg.seed)
    run = control_run_name(cfg.seed)
    rows: list[RolloutRow] = []
    played = ReplayedStep()
    callbacks = replay_callbacks(budget, played)
    for callback in callbacks:
        callback.on_train_begin()
    with Progress(f"control {run} steps 1..{steps}", steps, "steps") as progress:
        for step in range(1, steps + 1):
            progress.update(detail=f"step {step}")
            state = StepState(step, None, [])
            for callback in callbacks:
                callback.on_step_begin(state)
            step_rows, _, _, cursor = play_step(run, step, cursor, by_id, cfg, workers)
            played.rows = step_rows
            for callback in reversed(callbacks):
                callback.on_step_end(state)
            live = [r for r in step_rows if not r["masked"]]
            # an unmasked rollout was graded: its Y is 0 or 1
            rate = sum(cast(int, r["Y"]) for r in live) / len(live) if live else float("nan")
            log(f"{run} step {step}: pass {rate:.2f} ({len(live)} of {len(step_rows)} unmasked)")
            rows += step_rows
            progress.update(advance=1)
    for callback in reversed(callbacks):
        callback.on_train_end()
    return rows
