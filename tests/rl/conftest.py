"""Fixtures shared by the training tests: one imperfect toy policy per session."""

from __future__ import annotations

import pytest
from policyfactory import train_toy_policy
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
