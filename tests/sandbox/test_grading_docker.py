"""The real docker sandbox: controls, cheating patches, runaway patches, cleanup."""

from __future__ import annotations

import time

import pytest
from taskfactory import CALC_BUG, CALC_FIXED, CONFIG, WEIGHTS, make_calc_task

from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.sandbox.docker_backend import count_sandbox_containers
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.limits import limit_settings
from editcredit.sandbox.patches import diff_trees

FORCE_PASS_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


def cheat_patches(task):
    rewritten_tests = task.files["test_calc.py"].replace("== 5", "== -1")
    return {
        "conftest forcing pass": diff_trees({}, {"conftest.py": FORCE_PASS_CONFTEST}),
        "nested conftest": diff_trees({}, {"sub/conftest.py": FORCE_PASS_CONFTEST}),
        "edited test file": diff_trees(
            {"test_calc.py": task.files["test_calc.py"]}, {"test_calc.py": rewritten_tests}
        ),
        "pytest.ini deselect": diff_trees({}, {"pytest.ini": "[pytest]\naddopts = -k mul\n"}),
        "pyproject addopts": diff_trees(
            {}, {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p no:python'\n"}
        ),
        "sitecustomize": diff_trees({}, {"sitecustomize.py": "import os\nos._exit(0)\n"}),
    }


@pytest.fixture(params=["warm", "fresh"])
def box(request, docker_ready):
    sandbox = make_sandbox("docker", {**CONFIG["sandbox"], "docker_mode": request.param})
    yield sandbox
    sandbox.close()


def test_gold_scores_1_and_base_tree_0(box, calc_task):
    gold = grade_tree(calc_task, calc_task.patch, box, *WEIGHTS)
    assert (gold.verdict, gold.resolved, gold.U) == ("valid_1", 1, 1.25)
    empty = grade_tree(calc_task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.resolved) == ("valid_0", 0)
    assert empty.tests["test_calc.py::test_add"]["status"] == "failed"
    assert gold.sandbox.isolation.startswith("docker")


def test_empty_patch_is_zero_without_running(calc_task):
    class NoSandbox:
        def grade(self, *a):  # pragma: no cover - must not be called
            raise AssertionError("an empty patch must not be run")

    report = grade_patch(calc_task, "  \n", NoSandbox(), *WEIGHTS)
    assert (report.verdict, report.resolved, report.sandbox) == ("empty_patch", 0, None)


@pytest.mark.parametrize("name", list(cheat_patches(make_calc_task())))
def test_cheating_patches_do_not_score_1(docker_sandbox, calc_task, name):
    report = grade_patch(calc_task, cheat_patches(calc_task)[name], docker_sandbox, *WEIGHTS)
    assert report.resolved != 1, report.reason
    assert report.dropped_paths, "the protected change must be listed"


def test_cheat_alongside_a_real_fix_keeps_the_fix_and_drops_the_cheat(docker_sandbox, calc_task):
    patch = calc_task.patch + cheat_patches(calc_task)["conftest forcing pass"]
    report = grade_patch(calc_task, patch, docker_sandbox, *WEIGHTS)
    assert report.resolved == 1
    assert report.dropped_paths == ["conftest.py"]


def test_patch_that_does_not_apply_is_zero(docker_sandbox, calc_task):
    bad = diff_trees({"calc.py": "something else\n"}, {"calc.py": "other\n"})
    report = grade_patch(calc_task, bad, docker_sandbox, *WEIGHTS)
    assert (report.verdict, report.resolved) == ("patch_does_not_apply", 0)


def test_symlink_patch_does_not_apply(docker_sandbox, calc_task):
    link = (
        "diff --git a/evil.py b/evil.py\nnew file mode 120000\n--- /dev/null\n"
        "+++ b/evil.py\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    report = grade_patch(calc_task, link, docker_sandbox, *WEIGHTS)
    assert report.verdict == "patch_does_not_apply"
    assert "symlink" in report.reason


def test_infinite_loop_is_a_valid_0_with_a_timeout_and_leaves_no_container(box):
    task = make_calc_task(timeout_s=10)
    loop = diff_trees(
        {"calc.py": CALC_BUG},
        {"calc.py": CALC_BUG.replace("return a - b", "while True:\n        pass")},
    )
    box.limit_settings = limit_settings({"floor_s": 1.0, "collect_floor_s": 3.0})
    before = count_sandbox_containers(own=True)
    start = time.monotonic()
    report = grade_patch(task, loop, box, *WEIGHTS)
    elapsed = time.monotonic() - start
    assert (report.outcome, report.verdict, report.resolved) == ("verdict", "valid_0", 0)
    assert "timeout" in report.reason
    assert report.tests["test_calc.py::test_add"]["status"] == "timeout"
    assert report.tests["test_calc.py::test_mul"]["status"] == "passed"  # the run went on
    assert elapsed < 10 + 10
    # the sandbox is still usable afterwards
    assert grade_patch(task, task.patch, box, *WEIGHTS).resolved == 1
    box.close()
    assert count_sandbox_containers(own=True) <= before - (1 if box.mode == "warm" else 0)


def test_a_loop_is_the_patchs_failure_even_past_the_runs_own_limit(docker_sandbox):
    """Per-test limit (4 s) above the run's limit (3 s): the looping test is waited for until
    its own limit, then the run goes on; never an infrastructure failure."""
    task = make_calc_task(timeout_s=3)
    loop = diff_trees(
        {"calc.py": CALC_BUG},
        {"calc.py": CALC_BUG.replace("return a - b", "while True:\n        pass")},
    )
    saved = docker_sandbox.limit_settings
    docker_sandbox.limit_settings = limit_settings({"floor_s": 4.0, "collect_floor_s": 3.0})
    try:
        report = grade_patch(task, loop, docker_sandbox, *WEIGHTS)
    finally:
        docker_sandbox.limit_settings = saved
    assert (report.outcome, report.verdict) == ("verdict", "valid_0"), report.reason
    assert report.tests["test_calc.py::test_add"]["status"] == "timeout"
    assert report.tests["test_calc.py::TestMore::test_mul"]["status"] == "passed"


def test_a_run_past_its_whole_limit_is_an_infrastructure_failure(docker_sandbox):
    """Every test slow but within its own limit, the run as a whole past its limit: no verdict
    (a test still within its own limit is waited for; the next one is not started)."""
    task = make_calc_task(timeout_s=3)
    slow = CALC_FIXED.replace('"""Sum."""', '"""Sum."""\n    import time\n    time.sleep(1)')
    slow = slow.replace("    return a * b", "    import time\n    time.sleep(1)\n    return a * b")
    report = grade_patch(
        task, diff_trees({"calc.py": CALC_BUG}, {"calc.py": slow}), docker_sandbox, *WEIGHTS
    )
    assert report.outcome == "infrastructure_failure"
    assert report.verdict is None and report.resolved is None
    assert "exceeded its limit" in report.reason and report.infra_cause == "run_timeout"
    assert not report.sandbox.timeouts


def test_fork_bomb_and_network_are_contained(docker_sandbox, calc_task):
    net = CALC_BUG.replace(
        "    return a * b",
        "    import socket\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
        "    return a * b",
    )
    report = grade_patch(
        calc_task, diff_trees({"calc.py": CALC_BUG}, {"calc.py": net}), docker_sandbox, *WEIGHTS
    )
    assert report.resolved == 0
    assert report.tests["test_calc.py::test_mul"]["status"] == "failed"


def test_containers_are_removed_on_close(docker_ready, calc_task):
    before = count_sandbox_containers(own=True)
    with make_sandbox("docker", CONFIG["sandbox"]) as sandbox:
        assert count_sandbox_containers(own=True) == before + 1
        grade_patch(calc_task, calc_task.patch, sandbox, *WEIGHTS)
    assert count_sandbox_containers(own=True) == before
