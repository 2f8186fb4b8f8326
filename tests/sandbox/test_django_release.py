"""A real Django release graded through its own ``tests/runtests.py``: Django's
``SimpleTestCase`` replaces every ``async def`` test on the instance with
``async_to_sync(method)`` before running it, which is the framework's, not tampering.

The image holds Django 5.1.4's sdist (tests included) at ``/testbed``, installed in development
mode (a ``.pth``), with the wheels of asgiref and sqlparse. The task plants a bug in the async
branch of ``xframe_options_deny``; ``decorators.test_clickjacking`` has sync and async tests of
each decorator.
"""

from __future__ import annotations

import pytest
from taskfactory import CONFIG, WEIGHTS
from upstreamfactory import build_layout_image, fresh_dir, unpack_sdist, unpack_wheel, write_files

from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

pytestmark = [pytest.mark.docker, pytest.mark.slow]

VERSION = "5.1.4"
WHEELS = ["asgiref==3.8.1", "sqlparse==0.5.2"]
SOURCE = "django/views/decorators/clickjacking.py"
TESTS = "tests/decorators/test_clickjacking.py"
M = "decorators.test_clickjacking"
AWAITED = "            response = await view_func(*args, **kwargs)\n"
SET = (
    '            if response.get("X-Frame-Options") is None:\n'
    '                response["X-Frame-Options"] = "{}"\n'
)
DENY = AWAITED + SET.format("DENY")
DENY_BUG = AWAITED + SET.format("SAMEORIGIN")
SAMEORIGIN = AWAITED + SET.format("SAMEORIGIN")
SAMEORIGIN_BUG = AWAITED + SET.format("DENY")


def _with(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.fixture(scope="module")
def django_task(docker_ready, tmp_path_factory):
    ctx = tmp_path_factory.mktemp("django")
    top = unpack_sdist(f"django=={VERSION}", fresh_dir(ctx / "sdist"))
    repo, site = fresh_dir(ctx / "repo"), fresh_dir(ctx / "site")
    for name in ("django", "tests", "Django.egg-info"):
        (top / name).rename(repo / name)
    fixed = (repo / SOURCE).read_text(encoding="utf-8")
    base = _with(fixed, DENY, DENY_BUG)
    (repo / SOURCE).write_text(base, encoding="utf-8")
    for spec in WHEELS:
        unpack_wheel(spec, site)
    write_files(site, {"django-devinstall.pth": "/testbed\n"})
    tag = f"editcredit-layout:django-{VERSION}"
    build_layout_image(tag, ctx)
    task = Task(
        instance_id=f"django__django-{VERSION}",
        repo="django/django",
        problem_statement="xframe_options_deny on an async view sets SAMEORIGIN",
        patch=diff_trees({SOURCE: base}, {SOURCE: fixed}),
        FAIL_TO_PASS=[
            f"test_decorator_sets_x_frame_options_to_deny_async_view ({M}.XFrameOptionsDenyTests)"
        ],
        PASS_TO_PASS=[
            f"test_decorator_sets_x_frame_options_to_deny ({M}.XFrameOptionsDenyTests)",
            f"test_decorator_sets_x_frame_options_to_sameorigin_async_view "
            f"({M}.XFrameOptionsSameoriginTests)",
            f"test_exempt_decorator_async_view ({M}.XFrameOptionsExemptTests)",
        ],
        test_paths=[TESTS],
        image=tag,
        suite="django-releases",
        test_runner="django",
        timeout_s=120.0,
    )
    return task, base, fixed


@pytest.fixture(scope="module")
def box(docker_ready):
    with make_sandbox("docker", CONFIG["sandbox"]) as sandbox:
        yield sandbox


def test_django_async_tests_are_not_tampering(django_task, box):
    task, base, fixed = django_task
    gold = grade_patch(task, task.patch, box, *WEIGHTS)
    assert (gold.outcome, gold.verdict, gold.tampering) == ("verdict", "valid_1", False), (
        gold.reason
    )
    assert {t["status"] for t in gold.tests.values()} == {"passed"}
    assert not gold.sandbox.observations.tampering
    empty = grade_tree(task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.tampering) == ("valid_0", False), empty.reason
    assert empty.tests[task.FAIL_TO_PASS[0]]["status"] == "failed"
    # the fix, and a bug planted in the async branch of xframe_options_sameorigin
    planted = diff_trees({SOURCE: base}, {SOURCE: _with(fixed, SAMEORIGIN, SAMEORIGIN_BUG)})
    report = grade_patch(task, planted, box, *WEIGHTS)
    assert (report.verdict, report.tampering) == ("valid_0", False), report.reason
    failed = {i for i, t in report.tests.items() if t["status"] != "passed"}
    assert failed == {task.PASS_TO_PASS[1]}
