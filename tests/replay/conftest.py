"""The small real study whose stored gradings the replay tests re-grade (built once)."""

from __future__ import annotations

import pytest
from jobfactory import NO_RAY, run_segment
from policyfactory import toy_tasks, train_toy_policy
from taskfactory import CONFIG


@pytest.fixture(scope="session")
def study(tmp_path_factory, docker_ready):
    """A real training segment of arm B (every eligible trajectory queried), graded in the
    docker sandbox: its rollouts and credit ledger are the stored gradings to replay."""
    from editcredit.data.freeze import write_parquet
    from editcredit.sandbox.factory import make_sandbox

    root = tmp_path_factory.mktemp("study")
    box = make_sandbox("docker", CONFIG["sandbox"])
    try:
        base = train_toy_policy(root / "base", box, give_up=0.5, sft_steps=300)
    finally:
        box.close()
    tasks = root / "tasks.parquet"
    write_parquet(toy_tasks(), tasks)
    segment = root / "runs" / "B-s42" / "step_1"
    overrides = {
        **NO_RAY,
        "training.segment_steps": 1,
        "training.grpo.tasks_per_step": 3,
        "training.grpo.group_size": 4,
        "training.grpo.micro_batch_size": 4,
        "training.grpo.lr": 0.01,
        "training.grpo.query_rate": 1.0,
        # room for edit, run, edit: the last block reverted leaves the first edit (a tree
        # that runs); reverting an episode's only block gives the base tree, an empty patch
        "agent.max_turns": 4,
        "agent.max_new_tokens": 24,
    }
    run_segment("B-s42", 1, base, segment, tasks, overrides, gate_dir=str(root / "gates"))
    return {"root": root, "segment": segment, "tasks": tasks}
