"""The minibugs environment over a real (local) sandbox: edits, test runs, budgets, patches."""

from __future__ import annotations

import random

import pytest
from taskfactory import WEIGHTS, make_calc_task

from editcredit.agent.experts import apply_single_file_diff, expert_actions, fix_lines
from editcredit.agent.minibugs_env import MinibugsEnv, content_hash
from editcredit.grading.grader import grade_patch


@pytest.fixture
def env(local_sandbox):
    return MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=False, candidates=False, try_scope="file"
    )


def test_fix_run_submit(env, local_sandbox):
    task = make_calc_task()
    first = env.reset(task)
    assert "calc.py" in first
    obs, done = env.step("edit calc.py\n- -\n+ +")
    assert not done and obs == "calc.py edited"
    obs, done = env.step("run")
    assert obs.startswith("tests: 5 passed, 0 failed")
    obs, done = env.step("submit")
    assert done and env.end_reason == "submit"
    kinds = [t.kind for t in env.turns]
    assert kinds == ["edit", "run", "submit"]
    before = content_hash(task.files["calc.py"])
    assert env.turns[0].changes["calc.py"][0] == before
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1


def test_garbled_action_is_a_recorded_format_error_not_a_crash(env):
    env.reset(make_calc_task())
    obs, done = env.step("\x00 edit ??? 12")
    assert obs.startswith("format error:") and not done
    assert env.turns[0].kind == "format_error" and env.turns[0].changes == {}
    obs, _ = env.step("edit calc.py\n- /\n+ *")
    assert obs == "the old text does not occur in calc.py; nothing changed"
    assert env.turns[1].changes == {}
    obs, _ = env.step("edit calc.py\n- return a\n+ return b")
    assert obs == "the old text occurs 2 times in calc.py; nothing changed"
    obs, _ = env.step("edit other.py\n- -\n+ +")
    assert obs == "no file other.py; nothing changed"
    obs, _ = env.step("edit calc.py add\n-\n+")  # the old language: a format error
    assert obs.startswith("format error: unknown action") and env.turns[4].kind == "format_error"
    assert [t.kind for t in env.turns] == ["format_error", "edit", "edit", "edit", "format_error"]
    assert env.final_patch() == ""


def test_run_reports_failures_without_the_fix(env):
    task = make_calc_task()
    env.reset(task)
    obs, _ = env.step("run")
    assert "1 failed" in obs and "test_add" in obs
    assert "a + b" not in obs


def test_turn_budget_ends_the_episode(env):
    env.reset(make_calc_task())
    for _ in range(5):
        assert not env.step("run")[1]
    _, done = env.step("edit calc.py\n- add\n+ add")
    assert done and env.end_reason == "turn_budget"
    with pytest.raises(RuntimeError):
        env.step("run")


@pytest.mark.parametrize("style", ["minimal", "line"])
def test_experts_fix_the_task(local_sandbox, style):
    task = make_calc_task()
    path, pairs = fix_lines(task)
    assert path == "calc.py" and pairs == [(3, "    return a + b")]
    assert apply_single_file_diff(task.files["calc.py"], task.patch).count("a + b") == 1
    for seed in range(4):
        env = MinibugsEnv(
            local_sandbox, max_turns=8, numbered_lines=False, candidates=False, try_scope="file"
        )
        env.reset(task)
        actions = expert_actions(task, random.Random(seed), 1.0, 1.0, style)
        assert actions[-1] == "submit"
        for action in actions:
            env.step(action)
        assert env.end_reason == "submit"
        assert all(t.kind != "format_error" and t.observation != "" for t in env.turns)
        assert all(t.changes for t in env.turns if t.kind == "edit")
        assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        (
            'File "/spool/jobs/job-pyyet98q/tree/bitwise_kit.py", line 3',
            'File "bitwise_kit.py", line 3',
        ),
        ('File "/tmp/editcredit-x/tree/pkg/mod.py", line 9', 'File "pkg/mod.py", line 9'),
        ("assert add(2, 3) == 5", "assert add(2, 3) == 5"),
    ],
)
def test_observations_never_show_the_sandbox_work_directory(message, shown):
    """The per-grading directory is random: showing it would make trajectories irreproducible."""
    from editcredit.agent.minibugs_env import _WORKDIR

    assert _WORKDIR.sub("", message) == shown


def test_infrastructure_failures_of_the_episodes_test_runs_are_counted(local_sandbox):
    from editcredit.evaluation.sandboxes import FaultySandbox

    env = MinibugsEnv(
        FaultySandbox(local_sandbox, rate=1.0, seed=0, mode="report"),
        max_turns=6,
        numbered_lines=False,
        candidates=False,
        try_scope="file",
    )
    env.reset(make_calc_task())
    obs, _ = env.step("run")
    assert "infrastructure" in obs
    env.step("run")
    assert env.infra_failures == 2
    env.reset(make_calc_task())
    assert env.infra_failures == 0


HIDDEN_TESTS = """

def test_add_hidden():
    from calc import add
    assert add(10, 1) == 11
"""


def _task_with_a_hidden_test():
    """The calc task with a second FAIL_TO_PASS test that the statement was not drawn from."""
    task = make_calc_task()
    files = {**task.files, "test_calc.py": task.files["test_calc.py"] + HIDDEN_TESTS}
    return task.model_copy(
        update={
            "files": files,
            "FAIL_TO_PASS": ["test_calc.py::test_add", "test_calc.py::test_add_hidden"],
        }
    )


@pytest.mark.parametrize(
    ("edit", "shown", "resolved"),
    [
        # the visible failure is fixed; the hidden test fails, yet the agent's run says 0 failed
        ("edit calc.py\n- return a - b\n+ return 5", "tests: 5 passed, 0 failed", 0),
        ("edit calc.py\n- -\n+ +", "tests: 5 passed, 0 failed", 1),
        ("edit calc.py\n- -\n+ *", "tests: 4 passed, 1 failed", 0),
    ],
)
def test_run_executes_only_the_visible_tests(local_sandbox, edit, shown, resolved):
    task = _task_with_a_hidden_test()
    assert task.visible_tests() == ["test_calc.py::test_add", *task.PASS_TO_PASS]
    assert task.hidden_tests() == ["test_calc.py::test_add_hidden"]
    env = MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=False, candidates=False, try_scope="file"
    )
    env.reset(task)
    env.step(edit)
    obs, _ = env.step("run")
    assert obs.splitlines()[0] == shown
    assert "hidden" not in obs
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == resolved


def test_hidden_tests_are_never_executed_for_the_agent(local_sandbox):
    class Recording:
        def __init__(self):
            self.selections = []

        def grade(self, task, patch, select=None):
            self.selections.append(select)
            report = local_sandbox.grade(task, patch, select)
            ran = {i.nodeid for i in report.observations.items}
            assert select is None or ran <= set(select)
            return report

    box = Recording()
    task = _task_with_a_hidden_test()
    env = MinibugsEnv(box, max_turns=6, numbered_lines=False, candidates=False, try_scope="file")
    env.reset(task)
    env.step("run")
    assert box.selections == [task.visible_tests()]


def test_numbered_lines_show_file_line_numbers_and_anchor_edits(local_sandbox):
    """With numbered lines the seed function is shown with its file line numbers, and an edit
    naming line 3 changes that line although its fragment ("-") is not unique elsewhere."""
    env = MinibugsEnv(
        local_sandbox, max_turns=6, numbered_lines=True, candidates=False, try_scope="file"
    )
    task = make_calc_task()
    first = env.reset(task)
    assert first.endswith('calc.py:\n1: def add(a, b):\n2:     """Sum."""\n3:     return a - b')
    obs, _ = env.step("edit calc.py:2\n- -\n+ +")
    assert obs == "the old text does not occur in line 2 in calc.py; nothing changed"
    obs, _ = env.step("edit calc.py:3\n- -\n+ +")
    assert obs == "calc.py edited"
    obs, _ = env.step("run")
    assert obs.startswith("tests: 5 passed, 0 failed")
    assert grade_patch(task, env.final_patch(), local_sandbox, *WEIGHTS).resolved == 1
