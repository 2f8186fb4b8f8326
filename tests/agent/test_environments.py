"""agent.environment: which tasks each environment can play, the one factory, and the check
that names an unplayable task before any job runs."""

from __future__ import annotations

import json

import pytest
from taskfactory import CONFIG, make_calc_task

from editcredit.agent.environments import (
    bash_settings,
    check_played_suites,
    check_tasks,
    environment_factory,
    unserved,
)
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.data.freeze import write_parquet

INLINE = make_calc_task()
IMAGE = INLINE.model_copy(update={"files": None, "image": "repo:tag", "instance_id": "img-1"})


@pytest.mark.parametrize(
    ("environment", "task", "served"),
    [
        ("minibugs", INLINE, True),
        ("minibugs", IMAGE, False),
        ("bash", INLINE, True),
        ("bash", IMAGE, True),
        ("shell", INLINE, False),
    ],
)
def test_which_environment_plays_which_task(environment, task, served):
    assert (unserved(environment, task) is None) is served


def test_check_tasks_names_the_first_unplayable_task_and_the_setting():
    with pytest.raises(ValueError, match=r"agent.environment is 'minibugs'.*task img-1 of suite s"):
        check_tasks("minibugs", [INLINE, IMAGE], "suite s")
    check_tasks("bash", [INLINE, IMAGE], "suite s")


def test_the_factory_makes_the_configured_environment():
    agent = {**CONFIG["agent"], "max_turns": 5}
    env = environment_factory(agent, CONFIG["sandbox"])("a sandbox")
    assert isinstance(env, MinibugsEnv) and env.max_turns == 5 and env.sandbox == "a sandbox"
    with pytest.raises(ValueError, match="unknown environment 'shell'"):
        environment_factory({**agent, "environment": "shell"}, CONFIG["sandbox"])


def test_bash_settings_come_from_the_agent_and_the_sandbox():
    agent = {**CONFIG["agent"], "environment": "bash", "max_turns": 9}
    agent["bash"] = {**agent["bash"], "command_timeout_s": 7}
    cfg = bash_settings(agent, {**CONFIG["sandbox"], "mem_limit": "3g"})
    assert (cfg.max_turns, cfg.command_timeout_s, cfg.mem_limit) == (9, 7, "3g")
    assert cfg.image == CONFIG["sandbox"]["image"]
    assert cfg.output_limit == CONFIG["agent"]["bash"]["output_limit"]


@pytest.mark.docker
def test_the_factory_makes_a_bash_environment(docker_ready):
    from editcredit.agent.bash_env import BashEnv

    agent = {**CONFIG["agent"], "environment": "bash"}
    env = environment_factory(agent, CONFIG["sandbox"])(None)
    assert isinstance(env, BashEnv) and env.cfg.max_turns == agent["max_turns"]


def _row(instance_id):
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    return {
        "instance_id": instance_id,
        "repo": "org/repo",
        "base_commit": "abc",
        "problem_statement": "It breaks.",
        "patch": diff,
        "test_patch": diff.replace("x.py", "tests/test_x.py"),
        "FAIL_TO_PASS": json.dumps(["tests/test_x.py::test_b"]),
        "PASS_TO_PASS": json.dumps(["tests/test_x.py::test_a"]),
    }


def test_played_suites_are_read_before_any_job(tmp_path):
    source = tmp_path / "tasks.jsonl"
    source.write_text(json.dumps(_row("org__repo-7")) + "\n")
    suites = {
        "swe": {
            "generator": "swebench",
            "source": str(source),
            "image_template": "sweb.{instance_id}",
            "timeout_s": 60,
        },
        "gen": {"generator": "minibugs"},
        "frozen": {"generator": "minibugs"},
    }
    write_parquet([IMAGE], tmp_path / "frozen.parquet")
    frozen = {
        "swe": tmp_path / "none",
        "gen": tmp_path / "none",
        "frozen": tmp_path / "frozen.parquet",
    }
    where = lambda s: str(frozen[s])  # noqa: E731
    with pytest.raises(ValueError, match="task org__repo-7 of suite swe"):
        check_played_suites("minibugs", suites, ["swe", "gen"], where)
    with pytest.raises(ValueError, match="task img-1 of suite frozen"):
        check_played_suites("minibugs", suites, ["frozen"], where)
    check_played_suites("minibugs", suites, ["gen"], where)  # generated: inline trees
    frozen["elsewhere"] = tmp_path / "frozen.parquet"  # frozen, with no suites.<name> entry
    with pytest.raises(ValueError, match="task img-1 of suite elsewhere"):
        check_played_suites("minibugs", suites, ["elsewhere"], where)
    check_played_suites("bash", suites, ["swe", "gen", "frozen"], where)
    source.unlink()  # not there yet: an image template says enough
    with pytest.raises(ValueError, match="suite swe imports image tasks"):
        check_played_suites("minibugs", suites, ["swe"], where)
