"""The searching expert: it never reads the gold fix; it tries reversals and runs the tests."""

from __future__ import annotations

import random

import pytest
from taskfactory import WEIGHTS, make_calc_task

from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.agent.search_expert import (
    UNNEGATE,
    reversal_candidates,
    search_episode,
    search_order,
    visible_tests_pass,
)
from editcredit.grading.grader import grade_patch

ALL = {
    UNNEGATE: 1.0,
    "swap_operands": 1.0,
    "compare_flip": 1.0,
    "binop_swap": 1.0,
    "constant_shift": 1.0,
}
SOURCE = "def f(a, b):\n    if not (a < b):\n        return a - 1\n    return b\n"


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        ({UNNEGATE: 1.0}, {(2, "    if (a < b):")}),
        ({"compare_flip": 1.0}, {(2, "    if not (a <= b):")}),
        ({"binop_swap": 1.0}, {(3, "        return a + 1")}),
        ({"constant_shift": 1.0}, {(3, "        return a - 2"), (3, "        return a - 0")}),
        ({"swap_operands": 1.0}, {(2, "    if not (b < a):"), (3, "        return 1 - a")}),
        ({UNNEGATE: 0.0, "binop_swap": 0.0}, set()),
    ],
)
def test_reversal_candidates_by_kind(kinds, expected):
    found = reversal_candidates(SOURCE, "m.py", "f", kinds)
    assert {(c.line, c.new) for c in found} == expected
    for c in found:
        assert c.old == SOURCE.split("\n")[c.line - 1] and c.path == "m.py"


def test_reversal_candidates_are_enumerated_once_per_distinct_call(monkeypatch):
    from editcredit.agent import search_expert

    calls = []
    real = search_expert.enumerate_mutations
    monkeypatch.setattr(
        search_expert, "enumerate_mutations", lambda *a: calls.append(a) or real(*a)
    )
    source = SOURCE.replace("a - 1", "a - 7")  # a source no other test has cached
    first = reversal_candidates(source, "m.py", "f", ALL)
    first.clear()  # the caller's list is its own
    again = reversal_candidates(source, "m.py", "f", dict(reversed(list(ALL.items()))))
    assert len(calls) == 1 and again and again == reversal_candidates(source, "m.py", "f", ALL)
    assert reversal_candidates(source, "m.py", "f", {**ALL, UNNEGATE: 0.0}) != again
    assert len(calls) == 2


def test_search_order_is_seeded_and_follows_the_weights():
    cands = reversal_candidates(SOURCE, "m.py", "f", ALL)
    a = search_order(cands, ALL, random.Random(3))
    assert a == search_order(cands, ALL, random.Random(3))
    assert sorted(a, key=id) == sorted(cands, key=id)
    heavy = {**ALL, UNNEGATE: 1e6}
    firsts = [search_order(cands, heavy, random.Random(s))[0].kind for s in range(20)]
    assert firsts.count(UNNEGATE) >= 19


@pytest.mark.parametrize(
    ("observation", "passed"),
    [
        ("tests: 5 passed, 0 failed", True),
        ("tests: 4 passed, 1 failed\nFAILED x: assert 1 == 2", False),
        ("tests: 10 passed, 0 failed", True),
        ("tests: the tree could not be prepared", False),
        ("calc.py edited", False),
    ],
)
def test_tests_pass_reads_the_summary(observation, passed):
    assert visible_tests_pass(observation) is passed


@pytest.mark.parametrize(("style", "numbered"), [("minimal", False), ("anchored", True)])
def test_search_episode_tries_reverts_and_solves_without_the_gold_fix(
    local_sandbox, style, numbered
):
    task = make_calc_task()
    # the gold fix's own kind last: the expert must try, run, revert, then find it
    kinds = {"binop_swap": 1e-6, "swap_operands": 1.0, "constant_shift": 1.0}
    env = MinibugsEnv(
        local_sandbox, max_turns=12, numbered_lines=numbered, candidates=False, try_scope="file"
    )
    observations, actions = search_episode(env, task, random.Random(0), kinds, 12, style)
    assert len(observations) == len(actions)
    assert actions[-1] == "submit" and env.end_reason == "submit"
    runs = [o for o, a in zip(observations[1:], actions, strict=False) if a == "run"]
    assert runs and visible_tests_pass(runs[-1])
    assert not any(visible_tests_pass(o) for o in runs[:-1])
    edits = [a for a in actions if a.startswith("edit ")]
    assert len(edits) >= 3  # at least one wrong try and its revert, then the fix
    assert all(a.startswith("edit calc.py:") == numbered for a in edits)
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1


def test_search_episode_respects_the_turn_budget(local_sandbox):
    env = MinibugsEnv(
        local_sandbox, max_turns=4, numbered_lines=False, candidates=False, try_scope="file"
    )
    kinds = {"swap_operands": 1.0, "constant_shift": 1.0}
    _, actions = search_episode(env, make_calc_task(), random.Random(1), kinds, 4)
    assert 1 <= len(actions) <= 4 and env.end_reason in ("submit", "turn_budget")


def test_episodes_of_a_task_share_one_candidate_pool(local_sandbox):
    tried = set()
    for seed in range(6):
        env = MinibugsEnv(
            local_sandbox, max_turns=12, numbered_lines=False, candidates=False, try_scope="file"
        )
        _, actions = search_episode(
            env, make_calc_task(), random.Random(seed), ALL, 12, pool=2, pool_seed="s"
        )
        tried |= {a for a in actions if a.startswith("edit ")}
    assert len(tried) <= 4  # two candidates, each with its revert


@pytest.mark.parametrize(
    ("weights", "kind"),
    [
        ({UNNEGATE: 1.0, "drop_unary": 0.5}, UNNEGATE),
        ({UNNEGATE: 0.5, "drop_unary": 1.0}, "drop_unary"),
        ({"drop_unary": 1.0}, "drop_unary"),
    ],
)
def test_one_candidate_per_new_line_of_the_heavier_kind(weights, kind):
    """Dropping the "not" of "not (a < b)" is both unnegate and drop_unary: one candidate,
    whose kind (and so its place in the search order) is the one weighed more."""
    found = reversal_candidates(SOURCE, "m.py", "f", weights)
    same = [c for c in found if (c.line, c.new) == (2, "    if (a < b):")]
    assert [c.kind for c in same] == [kind]
