"""How the experts' corpus is played: each tree graded once (also one whose tests hit their time
limits), tasks round-robin over the workers, the episodes in the jobs' order."""

from __future__ import annotations

import threading

import pytest
from taskfactory import CONFIG, make_calc_task

from editcredit.agent.expert_corpus import (
    expert_corpus,
    expert_environment,
    play_batches,
    round_robin,
)
from editcredit.sandbox.base import SandboxReport, TestTimeout
from editcredit.sandbox.observations import Observations

TIMEOUT = TestTimeout(nodeid="test_calc.py::test_add", index=0, seconds=5.0, limit_s=5.0)


class TimingOut:
    """A sandbox whose every run has a test stopped by its limit; it records each patch."""

    workers = 1
    gold_times = None

    def __init__(self):
        self.patches = []

    def grade(self, task, patch, select=None):
        self.patches.append(patch)
        return SandboxReport(
            instance_id=task.instance_id,
            backend="fake",
            isolation="none",
            patch_applied=True,
            run_status="finished",
            observations=Observations(started=True, finished=True),
            seconds=5.0,
            log_tail="",
            timeouts=[TIMEOUT],
        )


def test_a_looping_tree_is_run_once_for_all_episodes_of_its_task():
    box = TimingOut()
    agent = {**CONFIG["agent"], "max_turns": 12, "candidates": True}
    make_env = expert_environment(agent, CONFIG["sandbox"])
    experts = {
        "kind": "search",
        "seed": 0,
        "episodes_per_task": 4,
        "search_weights": {"binop_swap": 1.0, "constant_shift": 1.0, "swap_operands": 1.0},
        "search_pool": 2,
        "fragment_style": "minimal",
    }
    corpus, _ = expert_corpus([make_calc_task()], box, experts, make_env, 12, 1)
    tries = {a for _, actions in corpus for a in actions if a.startswith("try")}
    assert len(corpus) == 4 and len(tries) == 2  # every episode tries both trees of its pool
    assert len(box.patches) == len(set(box.patches)) == 2


@pytest.mark.parametrize(
    "keys, order",
    [
        ([], []),
        (["a", "a", "a"], [0, 1, 2]),
        (["a", "a", "b", "b"], [0, 2, 1, 3]),
        (["a", "a", "a", "b", "c", "c"], [0, 3, 4, 1, 5, 2]),
        (["b", "a", "b", "a"], [0, 1, 2, 3]),
    ],
)
def test_round_robin_plays_every_tasks_first_episode_first(keys, order):
    assert round_robin(keys) == order


class NoMemo:
    misses = 0


def test_play_batches_returns_the_episodes_in_the_jobs_order():
    jobs = [(task, k) for task in "abc" for k in range(30)]  # 90 jobs: two batches of 64
    played = []
    lock = threading.Lock()

    def play(job):
        with lock:
            played.append(job)
        return f"{job[0]}{job[1]}"

    out = play_batches(play, jobs, NoMemo(), 1, None, [t for t, _ in jobs])
    assert out == [f"{t}{k}" for t, k in jobs]
    assert played[:4] == [("a", 0), ("b", 0), ("c", 0), ("a", 1)]  # round-robin over tasks
    assert play_batches(play, jobs, NoMemo(), 2, None, [t for t, _ in jobs]) == out
