"""The small real study whose stored gradings the replay tests re-grade (built once)."""

from __future__ import annotations

import copy

import pytest
from policyfactory import toy_tasks, train_toy_policy
from taskfactory import CONFIG

from editcredit.rl.train_job import train_segment_job


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
    training = copy.deepcopy(CONFIG["training"])
    training["segment_steps"] = 1
    training["grpo"].update(
        tasks_per_step=3, group_size=4, micro_batch_size=4, lr=0.01, query_rate=1.0
    )
    training["ray"] = {"enabled": False, "address": "", "num_workers": 1}
    segment = root / "runs" / "B-s42" / "step_1"
    train_segment_job(
        run="B-s42",
        step=1,
        previous=str(base),
        tasks_path=str(tasks),
        controls_path=None,
        out_dir=str(segment),
        training=training,
        # room for edit, run, edit: the last block reverted leaves the first edit (a tree
        # that runs); reverting an episode's only block gives the base tree, an empty patch
        agent={**CONFIG["agent"], "max_turns": 4, "max_new_tokens": 24},
        reward=CONFIG["reward"],
        grading=CONFIG["grading"],
        sandbox=CONFIG["sandbox"],
        gpus=0,
        threads=1,
        config={"test": True},
        gate_dir=str(root / "gates"),
    )
    return {"root": root, "segment": segment, "tasks": tasks}
