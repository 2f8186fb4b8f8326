"""The environment's candidate fixes (agent.candidates): the list, the action ``try <k>``,
and the searching expert that walks the list."""

from __future__ import annotations

import random

import pytest
from taskfactory import CALC_BUG, WEIGHTS, make_calc_task

from editcredit.agent.actions import Action, FormatError, format_action, parse_action
from editcredit.agent.candidates import (
    Candidate,
    candidate_fixes,
    candidate_line,
    candidate_listing,
    tree_with,
)
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.agent.search_expert import search_episode, visible_tests_pass
from editcredit.grading.grader import grade_patch


@pytest.mark.parametrize(
    ("text", "candidate"), [("try 1", 1), ("try 12", 12), ("try 3\n", 3), ("try 9999", 9999)]
)
def test_try_parses(text, candidate):
    action = parse_action(text)
    assert action == Action(kind="try", candidate=candidate)
    assert format_action(action) == text.rstrip("\n")


@pytest.mark.parametrize("text", ["try 0", "try", "try x", "try 1 2", "try 1\nrun", "try 01"])
def test_malformed_try_is_a_format_error(text):
    with pytest.raises(FormatError):
        parse_action(text)


def test_the_list_is_the_seed_functions_reversals_in_source_order():
    cands = candidate_fixes(make_calc_task())
    assert [(c.number, c.line, c.new) for c in cands] == [
        (1, 3, "    return a + b"),
        (2, 3, "    return b - a"),
    ]
    assert [candidate_line(c) for c in cands] == ["1: @3 - -> +", "2: @3 a - b -> b - a"]


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        ("    if not (a < b):", "    if (a < b):", "4: @2 delete not"),
        ("    x = a < b", "    x = a <= b", "4: @2 < -> <="),
    ],
)
def test_a_candidate_shows_the_smallest_change_of_its_line(old, new, shown):
    assert candidate_line(Candidate(4, "k", "m.py", 2, old, new)) == shown


def test_no_seed_function_no_candidates():
    task = make_calc_task().model_copy(update={"meta": {}})
    assert candidate_fixes(task) == []
    assert candidate_listing([]) == "candidate fixes: none"


def test_the_environment_lists_the_candidates_only_when_asked(local_sandbox):
    task = make_calc_task()
    shown = MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=False, candidates=True, try_scope="file"
    ).reset(task)
    listing = "candidate fixes (try <k>):\n1: @3 - -> +\n2: @3 a - b -> b - a"
    assert shown.endswith(listing)
    assert "candidate" not in MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=False, candidates=False, try_scope="file"
    ).reset(task)


def test_try_applies_one_candidate_to_the_original_tree(local_sandbox):
    task = make_calc_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=12, numbered_lines=False, candidates=True, try_scope="file"
    )
    env.reset(task)
    assert env.step("try 2") == ("candidate 2 applied", False)
    assert env.tree["calc.py"] == CALC_BUG.replace("return a - b", "return b - a")
    # a second try undoes the first: the file is the original with candidate 1 alone
    assert env.step("try 1") == ("candidate 1 applied", False)
    assert env.tree["calc.py"] == tree_with(task.files, env.candidates[0])
    assert env.step("try 1")[0] == "candidate 1 is already applied; calc.py unchanged"
    assert env.step("try 3")[0] == "no candidate 3; nothing changed"
    records = env.turns
    assert [bool(r.changes) for r in records] == [True, True, False, False]
    assert [r.kind for r in records] == ["try"] * 4
    assert env.step("submit") == ("submitted", True)
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1


def test_try_without_a_list_changes_nothing(local_sandbox):
    env = MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=False, candidates=False, try_scope="file"
    )
    env.reset(make_calc_task())
    assert env.step("try 1") == ("no candidate fixes are shown; nothing changed", False)
    assert env.turns[-1].kind == "try" and not env.turns[-1].changes


def test_the_searching_expert_walks_the_list_and_solves(local_sandbox):
    task = make_calc_task()
    # the gold fix's kind last: a wrong try, its run, then the fix
    kinds = {"binop_swap": 1e-6, "swap_operands": 1.0}
    env = MinibugsEnv(
        local_sandbox, max_turns=12, numbered_lines=False, candidates=True, try_scope="file"
    )
    observations, actions = search_episode(env, task, random.Random(0), kinds, 12)
    assert actions == ["try 2", "run", "try 1", "run", "submit"]
    assert not visible_tests_pass(observations[2]) and visible_tests_pass(observations[4])
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1


def test_the_searching_expert_keeps_to_the_turn_budget(local_sandbox):
    env = MinibugsEnv(
        local_sandbox, max_turns=3, numbered_lines=False, candidates=True, try_scope="file"
    )
    kinds = {"binop_swap": 1e-6, "swap_operands": 1.0}
    _, actions = search_episode(env, make_calc_task(), random.Random(0), kinds, 3)
    assert actions == ["try 2", "run", "submit"]
