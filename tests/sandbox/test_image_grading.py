"""Grading image-based tasks in their own images: controls, cheats, and the unreachable future.

The adversarial patch below recovers the fix from git history at import time (``git log --all``
+ ``git show``, or by reading ``.git/objects`` directly) and installs it. On a checkout whose
history holds the fix it works; graded in the task's image it cannot, and scores 0.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from imagefactory import image_suite, task_by_repo  # noqa: F401 - fixture
from taskfactory import CONFIG

from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.docker_backend import LABEL, docker_client
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HISTORY_READER = '''

def _fix_from_history():
    """Find a version of slugify in the repository's history that answers the problem."""
    import os
    import subprocess
    import zlib

    here = os.path.dirname(os.path.abspath(__file__))
    sources = []
    try:
        log = subprocess.run(
            ["git", "log", "--all", "--format=%H", "--", "textkit/core.py"],
            cwd=here, capture_output=True, text=True, timeout=10,
        ).stdout.split()
        for commit in log:
            shown = subprocess.run(
                ["git", "show", commit + ":textkit/core.py"],
                cwd=here, capture_output=True, text=True, timeout=10,
            )
            sources.append(shown.stdout)
    except Exception:
        pass
    folder = here
    while True:
        objects = os.path.join(folder, ".git", "objects")
        for sub in sorted(os.listdir(objects)) if os.path.isdir(objects) else []:
            for name in sorted(os.listdir(os.path.join(objects, sub))):
                try:
                    with open(os.path.join(objects, sub, name), "rb") as fh:
                        raw = zlib.decompress(fh.read())
                except Exception:
                    continue
                header, _, body = raw.partition(b"\\0")
                if header.startswith(b"blob") and b"def slugify" in body:
                    sources.append(body.decode("utf-8", "replace"))
        if os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    for source in sources:
        namespace = {}
        try:
            exec(compile(source, "<history>", "exec"), namespace)
            if namespace["slugify"]("Hello World!") == "hello-world":
                return namespace["slugify"]
        except Exception:
            continue
    return None


if _fix_from_history() is not None:
    slugify = _fix_from_history()
'''

SEES_GIT_DIR = """

import os as _os

if _os.path.exists(_os.path.join(_os.path.dirname(__file__), "..", ".git")):
    def slugify(text):
        return "hello-world"
"""


@pytest.fixture(scope="module")
def box(docker_ready):
    """The configured docker sandbox (warm mode: image tasks still get their own container)."""
    sandbox = make_sandbox("docker", CONFIG["sandbox"])
    yield sandbox
    sandbox.close()


def appended(base_dir, path: str, code: str) -> str:
    before = (base_dir / path).read_text(encoding="utf-8")
    return diff_trees({path: before}, {path: before + code})


@pytest.mark.parametrize(
    "name", ["textkit", "numkit", "shapes", "unitkit", "djangoish", "minisympy"]
)
def test_gold_1_empty_0(image_suite, box, name):  # noqa: F811
    task = task_by_repo(image_suite, name)
    assert task.image == f"editcredit-task:{task.instance_id}" and task.files is None
    gold = grade_tree(task, task.patch, box)
    assert (gold.verdict, gold.resolved, gold.U) == ("valid_1", 1, 1.25), gold.reason
    empty = grade_tree(task, "", box)
    assert (empty.verdict, empty.resolved) == ("valid_0", 0), empty.reason
    assert all(empty.tests[i]["status"] == "failed" for i in task.FAIL_TO_PASS)
    assert all(empty.tests[i]["status"] == "passed" for i in task.PASS_TO_PASS)
    assert grade_patch(task, "", box).verdict == "empty_patch"


def _host_checkout(repo, base_commit: str, dest) -> None:
    """A clone of the full history (the fix reachable through --all) at the base commit."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "clone", "-q", str(repo), str(dest)], check=True, env=env)
    subprocess.run(["git", "checkout", "-q", base_commit], cwd=dest, check=True, env=env)


def _host_pytest(tree, node: str, path_env: str) -> int:
    env = {"PATH": path_env, "HOME": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tree}"]
    return subprocess.run([*args, node], cwd=tree, env=env, capture_output=True).returncode


@pytest.mark.parametrize("route", ["git log", ".git objects"])
def test_history_reader_works_on_a_full_checkout(image_suite, tmp_path, route):  # noqa: F811
    """The positive control: where the history is reachable, the trick recovers the fix."""
    task = task_by_repo(image_suite, "textkit")
    repo = image_suite.repos[task.instance_id]
    tree = tmp_path / "checkout"
    _host_checkout(repo.path, task.base_commit, tree)
    patch = appended(tree, "textkit/core.py", HISTORY_READER)
    path_env = os.environ["PATH"] if route == "git log" else "/nonexistent"
    subprocess.run(["git", "apply", "-"], input=task.test_patch.encode(), cwd=tree, check=True)
    assert _host_pytest(tree, task.FAIL_TO_PASS[0], path_env) == 1  # the bug, without the trick
    subprocess.run(["git", "apply", "-"], input=patch.encode(), cwd=tree, check=True)
    assert _host_pytest(tree, task.FAIL_TO_PASS[0], path_env) == 0


def test_history_reader_scores_0_in_the_image(image_suite, box):  # noqa: F811
    task = task_by_repo(image_suite, "textkit")
    base = box.trees.get(task.image, task.workdir)
    assert not (base / ".git").exists()
    report = grade_patch(task, appended(base, "textkit/core.py", HISTORY_READER), box)
    assert (report.verdict, report.resolved) == ("valid_0", 0), report.reason
    assert report.tests[task.FAIL_TO_PASS[0]]["status"] == "failed"
    peek = grade_patch(task, appended(base, "textkit/core.py", SEES_GIT_DIR), box)
    assert peek.resolved == 0, "the graded tree must not show the image's /testbed/.git"


def test_image_task_drops_protected_paths_and_rejects_bad_patches(image_suite, box):  # noqa: F811
    task = task_by_repo(image_suite, "numkit")
    base = box.trees.get(task.image, task.workdir)
    tests = (base / "tests/test_stats.py").read_text()
    cheat = diff_trees(
        {"tests/test_stats.py": tests},
        {"tests/test_stats.py": tests.replace("== 2.5", "== 3.5"), "conftest.py": "x = 1\n"},
    )
    report = grade_patch(task, cheat, box)
    assert report.resolved == 0 and report.dropped_paths == ["conftest.py", "tests/test_stats.py"]
    both = grade_patch(task, task.patch + cheat, box)
    assert both.resolved == 1, both.reason
    stale = task.patch.replace("ordered[mid + 1]", "ordered[mid + 2]")
    assert grade_patch(task, stale, box).verdict == "patch_does_not_apply"
    link = (
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n"
    )
    assert grade_patch(task, link, box).verdict == "patch_does_not_apply"


def test_missing_image_is_a_setup_error_and_containers_are_removed(image_suite, box):  # noqa: F811
    task = task_by_repo(image_suite, "shapes")
    missing = task.model_copy(update={"image": "editcredit-task:no-such-instance"})
    with pytest.raises(SandboxError, match="no-such-instance"):
        box.grade(missing, task.patch)
    client = docker_client()
    for image_id in image_suite.images.values():
        left = client.containers.list(all=True, filters={"label": LABEL, "ancestor": image_id})
        assert left == [], f"grading containers of {image_id} were not removed"
