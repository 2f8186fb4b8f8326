"""The no-learning control of a training seed: the base policy replayed on the run's draws.

Every arm of a seed draws the same tasks at every step with the same sampling seeds (the cursor
and the group seeds depend on the seed and the step only). Replaying those steps with the base
policy, never updated, gives each step's pass rate had the trainer done nothing; a run's pass
rate minus the control's on the same draws is the trainer's effect, free of which tasks happened
to be drawn (common random numbers). A trainer that makes the policy worse shows up as a
negative difference (METHOD §5, training health).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
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
from editcredit.rl.workers import WorkerPool


def replay_cost(rows: Sequence[Mapping[str, Any]], seconds: float) -> tuple[dict[str, float], int]:
    """One replayed step's spend (tokens, gradings with the visible runs, wall seconds) and
    its masked rollouts, counted as a training step's are (no counterfactual queries)."""
    tokens = sum(sum(r["loss_mask"]) for r in rows)
    return step_cost(rows, [], {"generated_tokens": tokens, "cf_sent": 0}, seconds)


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
    With a ``budget``, each step is checked before it is played; a cap it would cross raises
    :class:`~editcredit.protocol.budget.BudgetExceeded` (its receipt under ``logs/budgets/``)."""
    if cfg.arm != Arm.O:
        raise ValueError(f"the control replays arm O's draws, not arm {cfg.arm!r}")
    by_id = {t.instance_id: t for t in pool}
    cursor = DataCursor(cfg.seed)
    run = control_run_name(cfg.seed)
    rows: list[RolloutRow] = []
    with Progress(f"control {run} steps 1..{steps}", steps, "steps") as progress:
        for step in range(1, steps + 1):
            progress.update(detail=f"step {step}")
            if budget is not None:
                budget.check(step)
            started = time.monotonic()
            step_rows, _, _, cursor = play_step(run, step, cursor, by_id, cfg, workers)
            if budget is not None:
                budget.add(*replay_cost(step_rows, time.monotonic() - started))
            live = [r for r in step_rows if not r["masked"]]
            # an unmasked rollout was graded: its Y is 0 or 1
            rate = sum(cast(int, r["Y"]) for r in live) / len(live) if live else float("nan")
            log(f"{run} step {step}: pass {rate:.2f} ({len(live)} of {len(step_rows)} unmasked)")
            rows += step_rows
            progress.update(advance=1)
    return rows
