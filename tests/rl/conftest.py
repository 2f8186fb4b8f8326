"""Fixtures shared by the training tests: one imperfect toy policy per session; a toy base
policy and the toy tasks frozen as a suite file, per module (a test module may define its own)."""

from __future__ import annotations

import pytest
from policyfactory import toy_tasks, train_toy_policy
from taskfactory import CONFIG


@pytest.fixture(scope="session")
def half_policy(tmp_path_factory, docker_ready):
    """A toy policy that fixes the toy bug about half of the time (it learned from experts half
    of whom submit at once): groups with unequal rewards, and room for RL to climb."""
    from editcredit.sandbox.factory import make_sandbox

    box = make_sandbox("docker", CONFIG["sandbox"])
    try:
        return train_toy_policy(
            tmp_path_factory.mktemp("half") / "model", box, give_up=0.5, sft_steps=300
        )
    finally:
        box.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory, docker_sandbox):
    """A toy base policy trained in the docker sandbox."""
    return train_toy_policy(tmp_path_factory.mktemp("base") / "model", docker_sandbox)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    """The toy tasks frozen as a suite's tasks.parquet."""
    from editcredit.data.freeze import write_parquet

    path = tmp_path_factory.mktemp("suite") / "tasks.parquet"
    write_parquet(toy_tasks(), path)
    return path
