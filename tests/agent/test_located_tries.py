"""Tries scoped to their function (``agent.try_scope: function``) on a multi-bug task built by
the generator: every bug's function and statement test on screen, candidates of every seed
function numbered on, fixes of different functions accumulating, and eligible blocks by
region (a function), so a final patch holds one eligible block per function fixed."""

from __future__ import annotations

import json
import random

import pytest

from editcredit.agent.candidates import (
    candidate_fixes,
    location_regions,
    tree_with,
    tried_at_location,
)
from editcredit.agent.edit_blocks import (
    FileChange,
    LineRegions,
    TurnChanges,
    changed_lines,
    counterfactual_tree,
    edit_blocks,
    is_default_test_path,
    overlaps,
)
from editcredit.agent.experts import bug_of_line, expert_actions
from editcredit.agent.minibugs_env import MinibugsEnv, run_selection, visible_tests
from editcredit.agent.probe import credit_figures
from editcredit.agent.protocol import content_hash
from editcredit.agent.search_expert import failed_count, search_episode
from editcredit.data.minibugs.pool_files import SeedModule
from editcredit.data.mutations import Mutation
from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch
from editcredit.stopping.points import replay_trees, sha256_text
from editcredit.suites.minibugs import Candidate
from editcredit.suites.multibugs import MultiCandidate, build_multi_task, plant_bugs

SOURCE = '''"""Three small functions."""


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def neg(a):
    return -a
'''
TESTS = """def test_add():
    from calc3 import add
    assert add(2, 3) == 5


def test_mul():
    from calc3 import mul
    assert mul(2, 3) == 6


def test_neg():
    from calc3 import neg
    assert neg(2) == -2
"""
MODULE = SeedModule("calc3", SOURCE, TESTS)
T = "test_calc3.py::"
ADD = Mutation("binop_swap", "add", 0, 5, 13, 5, 14, "+", "-")
MUL = Mutation("binop_swap", "mul", 0, 9, 13, 9, 14, "*", "**")
F2P = {"add": [T + "test_add"], "mul": [T + "test_mul"]}
WEIGHTS = {"binop_swap": 1.0, "swap_operands": 0.5, "constant_shift": 0.1}


def _single(function: str, mutation: Mutation) -> tuple[Candidate, Task]:
    cand = Candidate(MODULE, function, mutation, plant_bugs(SOURCE, [mutation]), "multibugs")
    return cand, Task(
        instance_id=cand.instance_id,
        repo="multibugs/calc3",
        problem_statement=f"`{function}` misbehaves",
        patch="gold",
        FAIL_TO_PASS=F2P[function],
        PASS_TO_PASS=sorted({T + "test_add", T + "test_mul", T + "test_neg"} - set(F2P[function])),
        statement_test=F2P[function][0],
        test_paths=["test_calc3.py"],
        files={"calc3.py": cand.mutated_source, "test_calc3.py": TESTS},
        suite="multibugs",
        split="train",
    )


def multi_task() -> Task:
    singles = [_single("add", ADD), _single("mul", MUL)]
    combo = MultiCandidate(MODULE, tuple(c for c, _ in singles), tuple(t for _, t in singles))
    return build_multi_task(combo, {"timeout_s": 10, "seed": 1})


def test_the_list_covers_every_seed_function_numbered_on():
    task = multi_task()
    assert candidate_fixes(task) == []  # the file scope's list: no single seed function
    located = candidate_fixes(task, every_function=True)
    assert [c.number for c in located] == list(range(1, len(located) + 1))
    assert {c.function for c in located} == {"add", "mul"}
    assert [c.function for c in located] == sorted(c.function for c in located)  # add first
    assert {c.span for c in located} == {(4, 5), (8, 9)}


@pytest.mark.parametrize(
    ("first", "second", "expected_lines"),
    [  # (line, new) of two tries: the second keeps the first unless they share a function
        (
            (5, "    return a + b"),
            (9, "    return a * b"),
            {5: "    return a + b", 9: "    return a * b"},
        ),
        (
            (5, "    return a + b"),
            (5, "    return b - a"),
            {5: "    return b - a", 9: "    return a ** b"},
        ),
    ],
)
def test_a_try_replaces_only_earlier_tries_at_its_function(first, second, expected_lines):
    task = multi_task()
    files = task.files
    by_key = {(c.line, c.new): c for c in candidate_fixes(task, every_function=True)}
    text = files["calc3.py"]
    for key in (first, second):
        text = tried_at_location(files, text, by_key[key])
    lines = text.split("\n")
    assert {n: lines[n - 1] for n in expected_lines} == expected_lines
    if first[0] != second[0]:  # a try of the file scope would have undone the first
        assert tree_with(files, by_key[second]).split("\n")[first[0] - 1] != first[1]


def test_every_bugs_statement_test_is_shown_and_run():
    task = multi_task()
    assert task.visible_tests() == [T + "test_add", T + "test_neg"]
    assert visible_tests(task, every_bug=True) == [T + "test_add", T + "test_mul", T + "test_neg"]
    assert run_selection(task, every_bug=True) is None  # every expected test


@pytest.mark.parametrize(
    ("observation", "failed"),
    [("tests: 3 passed, 2 failed\nFAILED x: y", 2), ("tests: 5 passed, 0 failed", 0), ("x", None)],
)
def test_failed_count(observation, failed):
    assert failed_count(observation) == failed


LINES = "a\nb\nc\nd\ne"


@pytest.mark.parametrize(
    ("before", "after", "lines"),
    [(LINES, LINES.replace("b", "B"), (2,)), (LINES, "a\nB\nc\nD\ne", (2, 4)), (LINES, "a", None)],
)
def test_changed_lines(before, after, lines):
    assert changed_lines(before, after) == lines


@pytest.mark.parametrize(
    ("region", "others", "expected"),
    [
        ("m.py::f", frozenset({"m.py::g"}), False),
        ("m.py::f", frozenset({"m.py::f"}), True),
        ("m.py::f", frozenset({"m.py"}), True),
        ("m.py", frozenset({"m.py::g"}), True),
        ("m.py", frozenset({"n.py::g"}), False),
    ],
)
def test_overlaps(region, others, expected):
    assert overlaps(region, others) is expected


def _blocks_of(texts):
    """Turns that each change m.py from one text to the next, a run between each."""
    store = {content_hash(t): t for t in texts}
    turns = [
        TurnChanges(2 * k, (FileChange("m.py", content_hash(a), content_hash(b)),))
        for k, (a, b) in enumerate(zip(texts, texts[1:], strict=False))
    ]
    regions = LineRegions({"m.py": (("f", 1, 2), ("g", 4, 5))}, store)
    return turns, store, regions


@pytest.mark.parametrize(
    ("texts", "eligible_by_path", "eligible_by_region"),
    [
        (["a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "A\nb\nc\nD\ne"], [False, True], [True, True]),
        (["a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "a\nB\nc\nd\ne"], [False, True], [False, True]),
        (["a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "A\nb\nC\nd\ne"], [False, True], [True, True]),
    ],
)
def test_eligibility_by_region(texts, eligible_by_path, eligible_by_region):
    turns, _, regions = _blocks_of(texts)
    assert [b.eligible for b in edit_blocks(turns, is_default_test_path)] == eligible_by_path
    by_region = edit_blocks(turns, is_default_test_path, regions)
    assert [b.eligible for b in by_region] == eligible_by_region


def test_the_counterfactual_restores_the_blocks_region_alone():
    texts = ["a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "A\nb\nc\nD\ne"]
    turns, store, regions = _blocks_of(texts)
    first, second = edit_blocks(turns, is_default_test_path, regions)
    final = {"m.py": texts[-1]}
    assert counterfactual_tree(final, first, turns, store, regions) == {"m.py": "a\nb\nc\nD\ne"}
    assert counterfactual_tree(final, second, turns, store, regions) == {"m.py": texts[1]}


@pytest.mark.parametrize("scope", ["file", "function"])
def test_a_recorded_try_replays_in_both_scopes(local_sandbox, scope):
    task = multi_task() if scope == "function" else None
    if task is None:
        from taskfactory import make_calc_task

        task = make_calc_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=8, numbered_lines=False, candidates=True, try_scope=scope
    )
    env.reset(task)
    for k in range(1, min(4, len(env.candidates)) + 1):
        env.step(f"try {k}")
    turns = [t.to_dict() for t in env.turns]
    trees = replay_trees(task.files, turns, "t", env.candidates)
    assert trees[-1] == env.tree
    assert all(
        sha256_text(tree[p]) == after
        for tree, t in zip(trees, turns, strict=True)
        for p, (_, after) in (t["changes"] or {}).items()
    )


def test_an_expert_episode_keeps_a_fix_per_bug_in_eligible_blocks(local_sandbox):
    task = multi_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=16, numbered_lines=False, candidates=True, try_scope="function"
    )
    shown = env.reset(task)
    assert "def add(a, b):" in shown and "def mul(a, b):" in shown and "def neg" not in shown
    _, actions = search_episode(env, task, random.Random(0), WEIGHTS, 16)
    assert actions[-1] == "submit" and sum(a.startswith("try") for a in actions) >= 2
    report = grade_patch(task, env.final_patch(), local_sandbox, 0.25, 0.25)
    assert report.Y == 1
    changes = [TurnChanges.from_mapping(t.turn, t.changes) for t in env.turns if t.changes]
    regions = location_regions(task, env.store)
    blocks = edit_blocks(changes, is_default_test_path, regions)
    eligible = [b for b in blocks if b.eligible]
    assert len(eligible) >= 2
    assert sum(b.eligible for b in edit_blocks(changes, is_default_test_path)) <= 1
    for block in eligible:  # each eligible block is one bug's fix: without it, its bug is back
        tree = counterfactual_tree(env.tree, block, changes, env.store, regions)
        assert tree != env.tree
    json.dumps([b.to_dict() for b in blocks])


def test_the_oracle_runs_after_each_bugs_fix_when_located():
    task = multi_task()
    assert bug_of_line(task) == {5: 0, 9: 1}
    plain = expert_actions(task, random.Random(0), 0.0, 0.0)
    located = expert_actions(task, random.Random(0), 0.0, 0.0, located=True)
    assert plain is not None and located is not None
    assert [a.split("\n")[0] for a in plain] == ["edit calc3.py", "edit calc3.py", "submit"]
    assert [a.split("\n")[0] for a in located] == [
        "edit calc3.py",
        "run",
        "edit calc3.py",
        "submit",
    ]


def test_credit_figures():
    rows = [
        {"bugs": 2, "eligible_blocks": 2, "Y": 1, "D": 0.625},
        {"bugs": 3, "eligible_blocks": 1, "Y": 0, "D": 0.0},
        {"bugs": 0, "eligible_blocks": 1, "Y": 0, "D": -0.25},
        {"bugs": 0, "eligible_blocks": 0, "Y": 0, "D": None},
    ]
    figures = credit_figures(rows)
    assert figures["trajectories"] == 4 and figures["multi_bug_trajectories"] == 2
    assert figures["share_two_or_more_eligible_blocks"] == 0.25
    assert figures["multi_bug_share_two_or_more_eligible_blocks"] == 0.5
    assert figures["queried_blocks"] == 3
    shares = [figures[f"share_D_{s}"] for s in ("positive", "zero", "negative")]
    assert shares == [0.3333, 0.3333, 0.3333]
    assert figures["multi_bug_queried_blocks"] == 2
    assert figures["multi_bug_share_D_positive"] == figures["multi_bug_share_D_zero"] == 0.5
    assert figures["multi_bug_share_D_negative"] == 0.0


@pytest.mark.parametrize("scope", ["file", "function"])
def test_training_and_the_probe_cut_an_episode_alike(local_sandbox, scope):
    """The rollout rows' blocks (episode_blocks, by the environment's try_scope) are the
    probe's cut: by region under function scope, by path under file scope."""
    from editcredit.agent.rollout import Episode
    from editcredit.agent.trajectory import block_regions, cut_episode, episode_blocks

    if scope == "function":
        task = multi_task()
    else:
        from taskfactory import make_calc_task

        task = make_calc_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=16, numbered_lines=False, candidates=True, try_scope=scope
    )
    env.reset(task)
    if scope == "function":
        search_episode(env, task, random.Random(0), WEIGHTS, 16)
    else:
        for k in range(1, min(3, len(env.candidates)) + 1):
            env.step(f"try {k}")
    changes = [TurnChanges.from_mapping(t.turn, t.changes) for t in env.turns if t.changes]
    regions = location_regions(task, env.store) if scope == "function" else None
    assert (block_regions(task, env) is None) == (scope == "file")
    expected = edit_blocks(changes, is_default_test_path, regions)
    got_changes, blocks, selected = episode_blocks(Episode(task, "r:1:t:0", env))
    assert got_changes == changes and blocks == expected
    cut = cut_episode(task, env, "r:1:t:0")
    assert cut.blocks == expected and cut.selected == selected
    if scope == "function":
        assert cut_episode(task, env, "r:1:t:0", located=True) == cut
        assert sum(b.eligible for b in blocks) >= 2
    if selected is not None:
        tree = counterfactual_tree(env.tree, selected, changes, env.store, regions)
        assert cut.counterfactual(env.tree, env.store) == tree


@pytest.mark.parametrize("scope", ["file", "function"])
def test_the_environment_and_the_stop_study_list_the_same_candidates(local_sandbox, scope):
    from editcredit.agent.candidates import listed_candidates

    for task in (multi_task(), __import__("taskfactory").make_calc_task()):
        env = MinibugsEnv(
            local_sandbox, max_turns=8, numbered_lines=False, candidates=True, try_scope=scope
        )
        env.reset(task)
        assert env.candidates == listed_candidates(task, scope)
    with pytest.raises(ValueError, match="try_scope"):
        listed_candidates(multi_task(), "module")


def test_the_stop_study_replays_tries_scoped_to_their_function(local_sandbox):
    """A multi-bug episode's tries replay in the stop study only with the list its environment
    showed (agent.try_scope: function)."""
    from editcredit.stopping.build import checkpoint_rows
    from editcredit.stopping.points import TrajectoryError

    task = multi_task()
    env = MinibugsEnv(
        local_sandbox, max_turns=16, numbered_lines=False, candidates=True, try_scope="function"
    )
    env.reset(task)
    search_episode(env, task, random.Random(0), WEIGHTS, 16)
    turns = [t.to_dict() for t in env.turns]
    row = {
        "rollout_key": "k0",
        "turns": json.dumps(turns),
        "turn_of_token": [t.turn for t in env.turns],
        "loss_mask": [1] * len(env.turns),
        "logprobs": [-0.5] * len(env.turns),
        "end_reason": env.end_reason,
    }
    trajs = [{"model": "base", "evalset": "h", "instance_id": task.instance_id, "sample": 0}]
    trajs[0]["row"] = row

    def grade_many(jobs):
        return [(None, "") for _ in jobs]

    rows = checkpoint_rows(trajs, {task.instance_id: task}, grade_many, "function")
    assert rows and rows[-1]["is_end"]
    final = [r for r in rows if r["is_end"]][0]
    from editcredit.stopping.points import sha256_text as _sha

    assert final["patch_sha256"] == _sha(env.final_patch())
    with pytest.raises(TrajectoryError):
        checkpoint_rows(trajs, {task.instance_id: task}, grade_many, "file")


def test_the_probe_queries_the_selected_block_of_each_episode(local_sandbox):
    """rollout_grade_and_query: the rows of rollout_and_grade, and for each episode its
    eligible blocks (cut as training cuts them) and the D of its selected block, graded: a
    policy that fixes both bugs of a multi-bug task holds two eligible blocks, each worth the
    other bug's tests; one that fixes one bug holds one, worth that bug's tests."""
    from taskfactory import CONFIG

    from editcredit.agent.environments import environment_factory
    from editcredit.agent.probe import rollout_and_grade, rollout_grade_and_query
    from editcredit.agent.rollout import RolloutConfig
    from editcredit.policy.generation import GenerationOutput
    from editcredit.sandbox.patches import diff_trees

    task = multi_task()
    number = {(c.line, c.new): c.number for c in candidate_fixes(task, every_function=True)}
    add_fix, mul_fix = number[(5, "    return a + b")], number[(9, "    return a * b")]

    class Chat:  # every distinct text one token id
        pad, eos, stop_ids = 0, 1, (1,)

        def __init__(self):
            self.texts = ["<pad>", "<eos>"]

        def token(self, text):
            self.texts.append(text)
            return len(self.texts) - 1

        def conversation(self, tool=None):
            chat = self

            class Conversation:
                def start(self, observation):
                    return [chat.token(observation)]

                observe = start

                def reply(self, ids):
                    return "".join(chat.texts[i] for i in ids if i > 1)

            return Conversation()

    class Script:  # the n-th action of every episode, whatever it saw
        def __init__(self, chat, actions):
            self.chat, self.actions = chat, actions

        def generate(self, prompts, max_new_tokens, temperature, seed):
            out = []
            for prompt in prompts:
                turn = min(sum(1 for t in prompt if t == 1), len(self.actions) - 1)
                ids = [self.chat.token(self.actions[turn]), 1]
                out.append(GenerationOutput(ids, [0.0, 0.0], True))
            return out

    agent = {**CONFIG["agent"], "try_scope": "function", "max_turns": 6}
    make_env = environment_factory(agent, CONFIG["sandbox"])
    weights = (CONFIG["grading"]["f_weight"], CONFIG["grading"]["g_weight"])

    def utility(files) -> float:
        return grade_patch(task, diff_trees(task.files, files), local_sandbox, *weights).U

    def patched(*lines):
        text = task.files["calc3.py"].split("\n")
        for line, new in lines:
            text[line - 1] = new
        return {**task.files, "calc3.py": "\n".join(text)}

    both = patched((5, "    return a + b"), (9, "    return a * b"))
    only_add, only_mul = patched((5, "    return a + b")), patched((9, "    return a * b"))
    cases = [
        # a block is a run of consecutive editing turns (METHOD §2): a test run between the
        # two tries makes two blocks, two tries in a row would be one
        ([f"try {add_fix}", "run", f"try {mul_fix}", "submit"], 2, 1, 2),
        ([f"try {add_fix}", "submit"], 1, 0, 1),
    ]
    for actions, eligible, resolved, samples in cases:
        chat = Chat()
        args = (
            [task], samples, "probe-train", local_sandbox, Script(chat, actions), chat,
            RolloutConfig.from_agent(agent), make_env, 7, CONFIG["reward"], CONFIG["grading"], 2,
        )  # fmt: skip
        rows, records = rollout_grade_and_query(*args)
        chat = Chat()
        plain = rollout_and_grade(*args[:4], Script(chat, actions), chat, *args[6:])
        assert [r["final_patch"] for r in rows] == [r["final_patch"] for r in plain]
        assert [r["Y"] for r in rows] == [r["Y"] for r in plain] == [resolved] * samples
        assert len(records) == samples
        for record in records:
            assert record["bugs"] == 2 and record["split"] == "train"
            assert record["eligible_blocks"] == eligible and record["Y"] == resolved
            if eligible == 2:  # the selected fix reverted: the other bug's fix alone is left
                left = {round(utility(both) - utility(only_add), 9)}
                left |= {round(utility(both) - utility(only_mul), 9)}
                assert record["D"] in left and record["D"] > 0
            else:  # the one fix reverted: the original tree
                assert record["D"] == round(utility(only_add) - utility(task.files), 9) > 0
        figures = credit_figures(records)
        assert figures["multi_bug_share_two_or_more_eligible_blocks"] == (eligible >= 2)
        assert figures["multi_bug_share_D_positive"] == 1.0
