"""RL learns where learning is certain: every real part of the trainer, one toy family.

The toy tasks are one bug (``add`` subtracts) under three ids; the base policy learned from
experts half of whom submit at once, so it fixes the bug about half of the time: the first action
decides the reward, and the better one is there to be reinforced. Arm O, from the base, through
the real segment job (rollout workers, the docker sandbox's grading, group advantages, the
update), in two segments; the no-learning control replays the base policy on the same draws.
The run's training pass rate over the last quarter of steps must beat the control's by at least
30 points.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from jobfactory import NO_RAY, run_control_replay, run_segment
from policyfactory import toy_tasks

from editcredit.stats.learning import learning_vs_control

pytestmark = [pytest.mark.docker, pytest.mark.slow]

STEPS, SEGMENT = 12, 6
#: Config overrides: two segments of 6 steps, groups of 8, short episodes, no Ray.
OVERRIDES = {
    **NO_RAY,
    "training.segment_steps": SEGMENT,
    "training.endpoint_step": STEPS,
    "training.grpo.tasks_per_step": 3,
    "training.grpo.group_size": 8,
    "training.grpo.micro_batch_size": 8,
    "training.grpo.lr": 1e-3,
    "agent.max_turns": 4,
    "agent.max_new_tokens": 24,
}


def test_arm_o_raises_the_training_pass_rate_30_points_over_the_control(half_policy, tmp_path):
    from editcredit.data.freeze import write_parquet

    tasks_file = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(), tasks_file)
    previous, segments = str(half_policy), []
    for end in range(SEGMENT, STEPS + 1, SEGMENT):
        out = tmp_path / "runs" / "O-s3" / f"step_{end}"
        gates = str(tmp_path / "gates")
        run_segment("O-s3", end, previous, out, tasks_file, OVERRIDES, gate_dir=gates)
        previous = str(out)
        segments.append(out)
    control = tmp_path / "control" / "s3.parquet"
    run_control_replay(3, half_policy, control, tasks_file, OVERRIDES)

    run = pd.concat([pd.read_parquet(Path(s) / "rollouts.parquet") for s in segments])
    record = learning_vs_control(run, pd.read_parquet(control), STEPS)
    assert record["first_step_equal"], "step 1 plays the base policy in both"
    base = record["control_pass_last_quarter"]
    assert 0.2 <= base <= 0.8, f"the base should fix the bug only some of the time: {base}"
    print(f"last quarter: run {record['run_pass_last_quarter']:.3f}, control {base:.3f}")
    assert record["delta_last_quarter"] >= 0.30, record
