"""The bash tool's commands run in the repository's environment where the image keeps one apart
from its ``python3`` (SWE-bench's conda environment at ``/opt/miniconda3/envs/testbed``), with no
derived image layer, from the same list of places the grading runner reads."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace

import pytest
from taskfactory import CONFIG
from upstreamfactory import build_layout_image, fresh_dir, write_files

from editcredit.agent.bash_actions import GUEST_HELPER
from editcredit.agent.bash_env import BashEnv
from editcredit.agent.environments import bash_settings
from editcredit.data.task import Task
from editcredit.sandbox.base import GUEST_DIR
from editcredit.sandbox.docker_backend import docker_client
from editcredit.sandbox.image import ImageTrees
from editcredit.sandbox.patches import diff_trees

_spec = importlib.util.spec_from_file_location("guest_repo_env", GUEST_DIR / "repo_env.py")
repo_env = importlib.util.module_from_spec(_spec)  # the guest module, standard library only
_spec.loader.exec_module(repo_env)

ENV = "/opt/miniconda3/envs/testbed"
SOURCE = "envpkg/__init__.py"
BUG = "import envdep\n\n\ndef double(x):\n    return envdep.TWO * x + 1\n"
FIXED = BUG.replace(" + 1", "")
REPO = {
    SOURCE: BUG,
    "tests/test_envpkg.py": "from envpkg import double\n\n\ndef test_double():\n"
    "    assert double(2) == 4\n",
}
#: a venv of the image's Python at ``where``: only its site-packages has the dependency
ENV_FILES = {
    "pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = true\n",
    "lib/python3.11/site-packages/envdep.py": "TWO = 2\nNAME = 'envdep-ok'\n",
}
IMPORT = 'python -c "import envdep, sys; print(envdep.NAME, sys.prefix)"'


@pytest.mark.parametrize(
    ("environ", "path"),
    [
        ({"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, f"{ENV}/bin:/usr/bin:/bin"),
        ({"PATH": ""}, f"{ENV}/bin"),
        ({}, f"{ENV}/bin"),
    ],
)
def test_activation_puts_the_environment_first(environ, path):
    before = dict(environ)
    env = repo_env.activated(environ, ENV)
    assert env["PATH"] == path
    assert (env["CONDA_PREFIX"], env["CONDA_DEFAULT_ENV"]) == (ENV, "testbed")
    assert {
        k: v for k, v in env.items() if k not in ("PATH", "CONDA_PREFIX", "CONDA_DEFAULT_ENV")
    } == {k: v for k, v in before.items() if k != "PATH"}
    assert environ == before  # a copy


def test_grading_and_the_bash_helper_read_one_list_of_places():
    probe = (
        f"import sys; sys.path.insert(0, {str(GUEST_DIR)!r}); import repo_env, runner; "
        "print(runner.REPOSITORY_PYTHONS is repo_env.REPOSITORY_PYTHONS)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.stdout == "True\n", proc.stderr
    assert GUEST_HELPER.startswith((GUEST_DIR / "repo_env.py").read_text(encoding="utf-8"))
    assert repo_env.REPOSITORY_PYTHONS == (f"{ENV}/bin/python",)


def _image(tmp_path, tag: str, env_at: str) -> str:
    """An image with ``REPO`` at /testbed and the environment at ``/opt/<env_at>``."""
    ctx = tmp_path / tag.split(":")[1]
    write_files(fresh_dir(ctx / "repo"), REPO)
    env = ctx / "opt" / env_at
    write_files(fresh_dir(env), ENV_FILES)
    (env / "bin").mkdir()
    (env / "bin/python").symlink_to("/usr/bin/python3.11")
    (env / "bin/python3").symlink_to("python")
    return build_layout_image(tag, ctx)


def _task(image: str) -> Task:
    return Task(
        instance_id=f"layout__{image.split(':')[1]}",
        repo="layout/envpkg",
        problem_statement="double(2) returns the wrong value",
        patch=diff_trees({SOURCE: BUG}, {SOURCE: FIXED}),
        FAIL_TO_PASS=["tests/test_envpkg.py::test_double"],
        PASS_TO_PASS=[],
        test_paths=["tests/test_envpkg.py"],
        image=image,
        suite="layout",
    )


#: The default config's bash budgets and limits (as the workflow builds them), roomier output.
BASH = replace(
    bash_settings(CONFIG["agent"], CONFIG["sandbox"]), command_timeout_s=20.0, output_limit=2000
)


@pytest.fixture
def trees(docker_ready):
    found = ImageTrees(docker_client())
    yield found
    found.close()


def _outputs(trees: ImageTrees, image: str, commands: list[str]) -> list[str]:
    env = BashEnv(trees, BASH)
    try:
        env.reset(_task(image))
        return [env.step(command)[0] for command in commands]
    finally:
        env.close()


@pytest.mark.docker
@pytest.mark.slow
def test_an_agents_python_is_the_repository_environments_without_a_derived_layer(trees, tmp_path):
    commands = [
        IMPORT,
        'python3 -c "import envpkg; print(envpkg.double(21))"',
        'echo "prefix=$CONDA_PREFIX name=$CONDA_DEFAULT_ENV path=$PATH"',
    ]
    with_env = _image(tmp_path, "editcredit-layout:bash-conda-env", "miniconda3/envs/testbed")
    imported, tree_import, seen = _outputs(trees, with_env, commands)
    assert imported == f"exit code 0\nenvdep-ok {ENV}\n", imported
    assert tree_import == "exit code 0\n43\n", tree_import
    assert f"prefix={ENV} name=testbed path={ENV}/bin:/usr/local/bin:/usr/bin:/bin\n" in seen

    # the same environment elsewhere: not the repository's, the image's own python3 runs
    without = _image(tmp_path, "editcredit-layout:bash-other-env", "elsewhere/envs/testbed")
    imported, tree_import, seen = _outputs(trees, without, commands)
    assert imported.startswith("exit code 127\n") and "python: command not found" in imported
    assert tree_import.startswith("exit code 1\n") and "No module named 'envdep'" in tree_import
    assert "prefix= name= path=/usr/local/bin:/usr/bin:/bin\n" in seen
