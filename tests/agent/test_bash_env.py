"""The bash-tool environment on the image-based suite: scripted episodes, edit blocks,
counterfactual regrading, and the container's limits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from imagefactory import image_suite, task_by_repo  # noqa: F401 - fixture
from taskfactory import CONFIG, WEIGHTS, make_calc_task

from editcredit.agent.bash_actions import BashFormatError, parse_bash_action
from editcredit.agent.bash_env import BashConfig, BashEnv, content_hash
from editcredit.agent.edit_blocks import counterfactual_tree, select_block
from editcredit.agent.environments import bash_settings
from editcredit.agent.rollout import Episode
from editcredit.agent.trajectory import episode_blocks
from editcredit.grading.grader import grade_patch
from editcredit.sandbox.docker_backend import docker_client
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

WRONG = """sed -i 's/return "".join(out)/return "".join(out).strip()/' textkit/core.py"""
REPAIR = """sed -i 's/[.]strip()/.rstrip("-")/' textkit/core.py"""
NOTE = "printf '\\nslugify makes URL-safe names.\\n' >> README.md"
CHECK = "python3 -c 'from textkit.core import slugify; print(repr(slugify(\"Hello World!\")))'"
SCRIPT = [
    "cat textkit/core.py",  # 0 inspect
    WRONG,  # 1 a wrong edit (block 0: modified later, ineligible)
    CHECK,  # 2 try it
    f"```bash\n{REPAIR}\n```",  # 3 the repair (block 1)
    f"{CHECK} && python3 -m pytest -q tests 2>&1 | tail -1",  # 4 try it, run the tests
    NOTE,  # 5 an unrelated edit (block 2)
    "submit",  # 6
]


def bash_config(**overrides) -> BashConfig:
    """The default config's bash budgets and limits, as the workflow builds them, with
    ``overrides``."""
    return replace(bash_settings(CONFIG["agent"], CONFIG["sandbox"]), **overrides)


@pytest.fixture(scope="module")
def box(docker_ready):
    sandbox = make_sandbox("docker", {**CONFIG["sandbox"], "docker_mode": "fresh"})
    yield sandbox
    sandbox.close()


@pytest.fixture
def env(box):
    environment = BashEnv(box.trees, bash_config(command_timeout_s=3.0, output_limit=400))
    yield environment
    environment.close()


def test_parse_one_command_per_turn():
    assert parse_bash_action("ls -la").command == "ls -la"
    assert parse_bash_action("I will look.\n```bash\nls\n```\n").command == "ls"
    assert parse_bash_action(" submit \n").kind == "submit"
    for bad in ["", "  ", "```\na\n```\n```\nb\n```", "<truncated>", "a\x00b", "x" * 20]:
        with pytest.raises(BashFormatError):
            parse_bash_action(bad, max_chars=10)


@pytest.mark.docker
@pytest.mark.slow
def test_scripted_episode_blocks_and_counterfactuals(image_suite, box, env):  # noqa: F811
    task = task_by_repo(image_suite, "textkit")
    first = env.reset(task)
    assert task.problem_statement in first and "/testbed" in first
    observations = [env.step(action)[0] for action in SCRIPT]
    assert "def slugify" in observations[0]
    assert "'hello-world-'" in observations[2]
    assert "'hello-world'" in observations[4] and "3 passed" in observations[4]
    assert env.end_reason == "submit" and env._container is None
    kinds = [t.kind for t in env.turns]
    assert kinds == ["bash"] * 6 + ["submit"]
    changed = {t.turn: sorted(t.changes) for t in env.turns if t.changes}
    assert changed == {1: ["textkit/core.py"], 3: ["textkit/core.py"], 5: ["README.md"]}
    assert env.turns[1].changes["textkit/core.py"][1] == env.turns[3].changes["textkit/core.py"][0]
    assert set(env.tree) == {"textkit/core.py", "README.md"} == set(env.base_files)
    assert env.final_patch() == diff_trees(env.base_files, env.tree)
    final = grade_patch(task, env.final_patch(), box, *WEIGHTS)
    assert final.verdict == "valid_1", final.reason

    # rollout keys whose score-blind selection is the repair (7) or the README note (0)
    expected = {7: (1, "valid_0"), 0: (2, "valid_1")}
    for sample, (index, verdict) in expected.items():
        key = f"test:0:editcredit__textkit-4:{sample}"
        changes, blocks, selected = episode_blocks(Episode(task, key, env))
        assert [b.turns for b in blocks] == [(1,), (3,), (5,)]
        assert [b.eligible for b in blocks] == [False, True, True]
        assert selected == select_block(blocks, key) and selected.index == index
        tree = counterfactual_tree(env.tree, selected, changes, env.store)
        report = grade_patch(task, env.patch_of(tree), box, *WEIGHTS)
        assert report.verdict == verdict, (selected, report.reason)
        if index == 1:  # reverting the repair leaves the wrong edit: D = 1.25 - 0
            assert ".strip()" in tree["textkit/core.py"]
            assert tree["README.md"] == env.tree["README.md"]
            assert (final.U, report.U) == (1.25, 0.0)


@pytest.mark.docker
@pytest.mark.slow
def test_the_container_is_closed_to_the_history_and_the_network(image_suite, env):  # noqa: F811
    task = task_by_repo(image_suite, "shapes")
    env.reset(task)
    obs, _ = env.step("id -u; git log --all --oneline; ls -a; test -e .git || echo no-git-dir")
    assert obs.startswith("exit code 0\n65534") and "no-git-dir" in obs
    assert "git: command not found" in obs
    obs, _ = env.step(
        "python3 -c \"import socket; socket.create_connection(('10.0.0.1', 80), timeout=2)\""
    )
    assert obs.startswith("exit code 1") and "OSError" in obs
    obs, _ = env.step("touch /usr/x 2>&1; grep CapEff /proc/self/status")
    assert "Read-only file system" in obs and "0000000000000000" in obs
    assert not any(t.changes for t in env.turns)


@pytest.mark.docker
@pytest.mark.slow
def test_budgets_background_jobs_and_a_killed_supervisor(image_suite, env):  # noqa: F811
    task = task_by_repo(image_suite, "numkit")
    env.reset(task)
    obs, _ = env.step("yes | head -c 100000")
    assert "[... 99600 bytes of output omitted ...]" in obs and len(obs) < 600
    obs, _ = env.step("sleep 10")
    assert obs.startswith("timed out after 3s")
    env.step("(sleep 1; echo late > late.txt) & echo started")
    obs, _ = env.step("sleep 1.5; ls")
    assert "late.txt" not in obs  # the background job died with its turn
    obs, done = env.step("echo hi > a.txt; kill -9 -1")
    assert "supervisor was killed" in obs and not done
    assert env.turns[-1].changes == {"a.txt": (None, content_hash("hi\n"))}
    obs, _ = env.step("")
    assert obs.startswith("format error") and env.turns[-1].kind == "format_error"
    env.step("rm a.txt numkit/stats.py")
    assert env.final_patch().count("deleted file mode") == 1  # a.txt never was in the base
    container = env._container
    env.end("context_budget")
    assert env.end_reason == "context_budget"
    with pytest.raises(Exception):  # noqa: B017 - any docker error: the container is gone
        docker_client().containers.get(container.id)


@pytest.mark.docker
def test_inline_tasks_run_in_the_sandbox_image(box):
    task = make_calc_task()
    env = BashEnv(box.trees, bash_config(max_turns=2))
    try:
        env.reset(task)
        env.step("sed -i 's/a - b/a + b/' calc.py")
        _, done = env.step("cat calc.py")
        assert done and env.end_reason == "turn_budget"
        assert diff_trees(task.files, env.tree) == env.final_patch() == task.patch
    finally:
        env.close()


BINARY_SCRIPT = [
    # a binary file, an executable new script, a mode change, a text file made binary
    "printf '\\000\\001\\377data' > numkit/table.bin",
    "printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh",
    "chmod +x numkit/stats.py",
    "printf '\\377\\376' > numkit/__init__.py",
]


@pytest.mark.docker
@pytest.mark.slow
def test_binary_files_links_and_modes_reach_the_graded_patch(image_suite, box, env, tmp_path):  # noqa: F811
    from editcredit.agent.bash_env import special_paths
    from editcredit.sandbox.workspace import materialize_from_base

    task = task_by_repo(image_suite, "numkit")
    env.reset(task)
    for command in BINARY_SCRIPT:
        env.step(command)
    assert env.special_paths() == [
        "numkit/__init__.py",
        "numkit/stats.py",
        "numkit/table.bin",
        "run.sh",
    ]
    env.step("submit")  # the container is gone; the patch is complete
    patch = env.final_patch()
    assert patch.count("GIT binary patch") == 3 and "new file mode 100755" in patch
    assert "old mode 100644\nnew mode 100755" in patch
    outcome = materialize_from_base(
        task, patch, tmp_path / "tree", box.trees.get(task.image, task.workdir)
    )
    assert outcome.applied, outcome.error
    tree = tmp_path / "tree"
    assert (tree / "numkit/table.bin").read_bytes() == b"\x00\x01\xffdata"
    assert (tree / "numkit/__init__.py").read_bytes() == b"\xff\xfe"
    assert (tree / "run.sh").stat().st_mode & 0o100 and (
        tree / "numkit/stats.py"
    ).stat().st_mode & 0o100
    assert (tree / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    # a counterfactual tree keeps the special paths (nothing drops out)
    assert "numkit/table.bin" in env.patch_of(env.base_files)
    # a symbolic link is in the patch too, and the grader refuses it by name
    env.reset(task)
    env.step("ln -s stats.py numkit/alias.py")
    link_patch = env.final_patch()
    assert "new file mode 120000" in link_patch
    report = grade_patch(task, link_patch, box, *WEIGHTS)
    assert report.verdict == "patch_does_not_apply" and "numkit/alias.py" in report.reason
    assert special_paths({"a": ["100644", "1"]}, {"a": ["100644", "2"]}, {"a"}, {"a"}) == []
