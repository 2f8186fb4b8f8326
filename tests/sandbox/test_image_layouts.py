"""Imports and plugins as the task image arranges them, graded in the real docker sandbox.

The image installs a src-layout package in development mode (a ``.pth`` in ``dist-packages``
adds ``/testbed/src``; its ``egg-info`` lies in the work tree), a namespace package, top-level
modules named like the grader's own guest modules (``records`` in ``src``, ``commands`` beside
the tests), and a pytest plugin (an ``entry_points.txt`` of ``pytest11`` in ``dist-packages``).
The tests import them all from the patched work tree; the plugin's fixture is there; a patch
that edits the development install's ``entry_points.txt`` to add a plugin adds none.
"""

from __future__ import annotations

import pytest
from taskfactory import CONFIG, WEIGHTS
from upstreamfactory import build_layout_image, fresh_dir, write_files

from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CORE_BUG = "def double(x):\n    return x + x + 1\n"
CORE_FIXED = "def double(x):\n    return x + x\n"
RECORDS = 'def fmt(x):\n    return f"<{x}>"\n'
EGG_ENTRY_POINTS = "[console_scripts]\nsrcpkg = srcpkg.core:double\n"
REPO = {
    "src/srcpkg/__init__.py": "from srcpkg.core import double\n",
    "src/srcpkg/core.py": CORE_BUG,
    "src/records.py": RECORDS,
    "src/nsroot/part/mod.py": "VALUE = 7\n",
    "src/srcpkg.egg-info/PKG-INFO": "Metadata-Version: 2.1\nName: srcpkg\nVersion: 0.1\n",
    "src/srcpkg.egg-info/entry_points.txt": EGG_ENTRY_POINTS,
    "src/srcpkg.egg-info/top_level.txt": "nsroot\nrecords\nsrcpkg\n",
    "tests/commands.py": 'HELP = "the repository\'s commands"\n',
    "tests/test_layout.py": """import os

import commands
import records
from nsroot.part.mod import VALUE

import srcpkg
from srcpkg import double


def test_double():
    assert double(2) == 4


def test_repository_modules_not_the_graders():
    assert records.fmt(1) == "<1>"
    assert commands.HELP == "the repository's commands"


def test_namespace_package():
    assert VALUE == 7


def test_imported_from_the_work_tree():
    assert os.path.dirname(srcpkg.__file__) == "/testbed/src/srcpkg"


def test_plugin_of_the_image(probe_value):
    assert probe_value == 42
""",
}
SITE = {
    "srcpkg.pth": "/testbed/src\n",
    "editcredit_probe.py": (
        "import pytest\n\n\n@pytest.fixture\ndef probe_value():\n    return 42\n"
    ),
    "editcredit_probe-1.0.dist-info/METADATA": (
        "Metadata-Version: 2.1\nName: editcredit-probe\nVersion: 1.0\n"
    ),
    "editcredit_probe-1.0.dist-info/entry_points.txt": "[pytest11]\nprobe = editcredit_probe\n",
    "editcredit_probe-1.0.dist-info/RECORD": "",
}
T = "tests/test_layout.py"
TAG = "editcredit-layout:src-devinstall"


def gold() -> str:
    return diff_trees({"src/srcpkg/core.py": CORE_BUG}, {"src/srcpkg/core.py": CORE_FIXED})


@pytest.fixture(scope="module")
def layout_task(docker_ready, tmp_path_factory) -> Task:
    ctx = tmp_path_factory.mktemp("layout")
    write_files(fresh_dir(ctx / "repo"), REPO)
    write_files(fresh_dir(ctx / "site"), SITE)
    build_layout_image(TAG, ctx)
    return Task(
        instance_id="layout__src_devinstall",
        repo="layout/srcpkg",
        problem_statement="double(2) returns 5, expected 4",
        patch=gold(),
        FAIL_TO_PASS=[f"{T}::test_double"],
        PASS_TO_PASS=[
            f"{T}::test_repository_modules_not_the_graders",
            f"{T}::test_namespace_package",
            f"{T}::test_imported_from_the_work_tree",
            f"{T}::test_plugin_of_the_image",
        ],
        test_paths=[T],
        image=TAG,
        suite="layout",
    )


@pytest.fixture(scope="module")
def box(docker_ready):
    with make_sandbox("docker", CONFIG["sandbox"]) as sandbox:
        yield sandbox


def test_src_layout_development_install_graded_right(layout_task, box):
    report = grade_patch(layout_task, layout_task.patch, box, *WEIGHTS)
    assert (report.outcome, report.verdict, report.tampering) == ("verdict", "valid_1", False), (
        report.reason
    )
    assert {t["status"] for t in report.tests.values()} == {"passed"}
    empty = grade_tree(layout_task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.tampering) == ("valid_0", False), empty.reason
    assert empty.tests[f"{T}::test_double"]["status"] == "failed"
    # a planted bug in the repository's own ``records`` module flips exactly its test
    planted = gold() + diff_trees(
        {"src/records.py": RECORDS}, {"src/records.py": RECORDS.replace("<{x}>", "[{x}]")}
    )
    report = grade_patch(layout_task, planted, box, *WEIGHTS)
    assert (report.verdict, report.tampering) == ("valid_0", False), report.reason
    failed = {i for i, t in report.tests.items() if t["status"] != "passed"}
    assert failed == {f"{T}::test_repository_modules_not_the_graders"}


def test_a_patch_cannot_add_a_pytest_plugin(layout_task, box):
    """The development install's entry points are the work tree's: a patch that adds a
    ``pytest11`` plugin there (one that would break every run) loads nothing."""
    boom = "raise RuntimeError('a plugin the patch added was loaded')\n"
    added = EGG_ENTRY_POINTS + "\n[pytest11]\nboom = srcpkg.boom\n"
    patch = gold() + diff_trees(
        {"src/srcpkg.egg-info/entry_points.txt": EGG_ENTRY_POINTS},
        {"src/srcpkg.egg-info/entry_points.txt": added, "src/srcpkg/boom.py": boom},
    )
    report = grade_patch(layout_task, patch, box, *WEIGHTS)
    assert (report.outcome, report.verdict, report.tampering) == ("verdict", "valid_1", False), (
        report.reason
    )
    assert report.tests[f"{T}::test_plugin_of_the_image"]["status"] == "passed"


#: SWE-bench's images keep the repository's interpreter in a conda environment that only
#: ``.bashrc`` activates; here an environment at the same place (a venv of the image's Python:
#: its own prefix and site-packages, where the development install's ``.pth`` lies).
ENV = "/opt/miniconda3/envs/testbed"
ENV_REPO = {
    "src/envpkg/__init__.py": CORE_BUG,
    "tests/test_env.py": f"""import shutil
import sys

from envpkg import double


def test_double():
    assert double(2) == 4


def test_the_environments_interpreter():
    assert sys.prefix == "{ENV}"
    assert shutil.which("python") == "{ENV}/bin/python"
""",
}
ENV_OPT = {
    "miniconda3/envs/testbed/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = true\n",
    "miniconda3/envs/testbed/lib/python3.11/site-packages/envpkg.pth": "/testbed/src\n",
}


def test_swebench_environment_interpreter_found_without_a_derived_layer(box, tmp_path):
    ctx = tmp_path / "ctx"
    write_files(fresh_dir(ctx / "repo"), ENV_REPO)
    write_files(fresh_dir(ctx / "opt"), ENV_OPT)
    (ctx / "opt/miniconda3/envs/testbed/bin").mkdir()
    (ctx / "opt/miniconda3/envs/testbed/bin/python").symlink_to("/usr/bin/python3.11")
    build_layout_image("editcredit-layout:conda-env", ctx)
    source = "src/envpkg/__init__.py"
    task = Task(
        instance_id="layout__conda_env",
        repo="layout/envpkg",
        problem_statement="double(2) returns 5, expected 4",
        patch=diff_trees({source: CORE_BUG}, {source: CORE_FIXED}),
        FAIL_TO_PASS=["tests/test_env.py::test_double"],
        PASS_TO_PASS=["tests/test_env.py::test_the_environments_interpreter"],
        test_paths=["tests/test_env.py"],
        image="editcredit-layout:conda-env",
        suite="layout",
    )
    gold = grade_patch(task, task.patch, box, *WEIGHTS)
    assert (gold.outcome, gold.verdict, gold.tampering) == ("verdict", "valid_1", False), (
        gold.reason
    )
    empty = grade_tree(task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.tampering) == ("valid_0", False), empty.reason
