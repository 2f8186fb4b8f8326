"""The local backend's warm server grades as its fresh runner process does.

``sandbox.local_mode: warm`` keeps one ``runner.py serve`` per sandbox and forks a test process
per grading; ``fresh`` starts ``runner.py once`` per grading. The same patches (the gold fix,
a patch that fixes nothing, report forgeries, loops in called code, a fixture and at import)
get the same verdicts, reasons, tampering findings, per-test statuses and timeouts in both; a
server that dies between gradings is started again and the next grading is not lost; and code
under test cannot stop its runner (process 1 of its own pid namespace) to turn its failure
into a died sandbox. The host interpreter's own pytest plugins take no part in a grading.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from hostilefactory import forgery_patches, loop_patches, make_primes_task, signal_server_patch
from taskfactory import CONFIG, WEIGHTS

from editcredit.grading.grader import grade_patch
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

#: small floors keep the loops short; the mechanism is the same at the defaults
LIMITS = {"floor_s": 1.5, "collect_floor_s": 3.0, "max_timeouts": 2}


def _patches(task) -> dict[str, str]:
    return {
        "gold": task.patch,
        "fixes nothing": diff_trees({}, {"notes.txt": "x\n"}),
        **forgery_patches(),
        **loop_patches(),
    }


def _seen(report) -> tuple:
    """What a grading decided, without its clocks (nor, in its reason, its work tree's path and
    the sentinels' names, which are drawn for each run, and so the order of its findings)."""
    reason = re.sub(r"/\S*/job-[^/]+/tree/", "<tree>/", report.reason)
    reason = re.sub(r"test_[0-9a-f]{12}", "test_<sentinel>", reason)
    head, _, findings = reason.partition(": ")
    reason = (head, sorted(findings.split("; ")))
    statuses = {nodeid: test["status"] for nodeid, test in report.tests.items()}
    timeouts = sorted((t.nodeid, t.reproduced, t.limited_by) for t in report.sandbox.timeouts)
    return (
        report.outcome,
        report.verdict,
        reason,
        report.resolved,
        report.tampering,
        statuses,
        timeouts,
    )


def _grade_all(mode: str, task, patches: dict[str, str]) -> dict[str, tuple]:
    cfg = {**CONFIG["sandbox"], "test_limits": LIMITS, "local_mode": mode}
    with make_sandbox("local", cfg) as box:
        assert box.mode == mode
        return {
            name: _seen(grade_patch(task, patch, box, *WEIGHTS)) for name, patch in patches.items()
        }


@pytest.mark.slow
def test_warm_and_fresh_local_sandboxes_grade_alike():
    task = make_primes_task()
    patches = _patches(task)
    warm = _grade_all("warm", task, patches)
    fresh = _grade_all("fresh", task, patches)
    assert warm["gold"][1:4] == ("valid_1", warm["gold"][2], 1)
    assert warm["fixes nothing"][1] == "valid_0"
    differ = {name: (warm[name], fresh[name]) for name in patches if warm[name] != fresh[name]}
    assert not differ, differ


@pytest.mark.parametrize("mode", ["warm", "fresh"])
def test_code_under_test_cannot_stop_its_local_runner(mode):
    """The patch's code signals process 1 and its parent (the runner) with SIGINT, SIGTERM and
    SIGKILL: the grading still ends in its verdict, a valid 0 for a patch that fixes nothing,
    not a died sandbox; the warm server lives on and grades the gold fix next."""
    from editcredit.sandbox.local_backend import _unshare_prefix

    if "--pid" not in _unshare_prefix():
        pytest.skip("no pid namespace here (unshare --pid): the runner can be signalled")
    task = make_primes_task()
    cfg = {**CONFIG["sandbox"], "test_limits": LIMITS, "local_mode": mode}
    with make_sandbox("local", cfg) as box:
        assert box.isolation.endswith("the runner process 1 of its own pid namespace")
        report = grade_patch(task, signal_server_patch(), box, *WEIGHTS)
        assert (report.outcome, report.verdict) == ("verdict", "valid_0"), report.reason
        server = box._server
        assert grade_patch(task, task.patch, box, *WEIGHTS).verdict == "valid_1"
        assert box._server is server  # the same warm server (None in fresh mode)


#: A test that passes only where none of the interpreter's ``pytest11`` plugins is registered.
NO_HOST_PLUGINS_TEST = """
import importlib.metadata


def test_no_plugin_of_the_interpreter(pytestconfig):
    names = {
        ep.name
        for dist in importlib.metadata.distributions()
        for ep in dist.entry_points
        if ep.group == "pytest11"
    }
    assert not [n for n in names if pytestconfig.pluginmanager.has_plugin(n)]
"""


def _host_plugins() -> set[str]:
    import importlib.metadata

    return {
        ep.name
        for dist in importlib.metadata.distributions()
        for ep in dist.entry_points
        if ep.group == "pytest11"
    }


@pytest.mark.parametrize("mode", ["warm", "fresh"])
def test_the_host_interpreters_pytest_plugins_take_no_part_in_a_local_grading(mode):
    """The local sandbox stands in for the embedded suites' image, which installs pytest alone:
    a development or GPU environment's plugins (here this interpreter's) are not registered in
    the test process, so they neither change a grading nor add to its cost."""
    if not _host_plugins():
        pytest.skip("this interpreter installs no pytest11 plugin")
    base = make_primes_task()
    files = {**base.files, "test_host.py": NO_HOST_PLUGINS_TEST}
    task = base.model_copy(
        update={
            "files": files,
            "test_paths": [*base.test_paths, "test_host.py"],
            "PASS_TO_PASS": [*base.PASS_TO_PASS, "test_host.py::test_no_plugin_of_the_interpreter"],
        }
    )
    cfg = {**CONFIG["sandbox"], "test_limits": LIMITS, "local_mode": mode}
    with make_sandbox("local", cfg) as box:
        report = grade_patch(task, task.patch, box, *WEIGHTS)
    assert report.tests["test_host.py::test_no_plugin_of_the_interpreter"]["status"] == "passed"
    assert (report.outcome, report.verdict) == ("verdict", "valid_1"), report.reason


def test_a_dead_local_server_is_started_again():
    task = make_primes_task()
    cfg = {**CONFIG["sandbox"], "test_limits": LIMITS, "local_mode": "warm"}
    with make_sandbox("local", cfg) as box:
        assert box._server is None  # started at the first grading
        assert grade_patch(task, task.patch, box, *WEIGHTS).verdict == "valid_1"
        first = box._server
        first.kill()
        first.wait()
        assert not box.alive()
        report = grade_patch(task, task.patch, box, *WEIGHTS)
        assert (report.outcome, report.verdict) == ("verdict", "valid_1"), report.reason
        assert box.alive() and box._server is not first
        spool = box._spool
    assert not spool.exists() and box._server is None


def test_killing_a_local_server_ends_the_test_process_it_forked():
    """A test process leads its own session: the server's kill must reach it too."""
    from editcredit.sandbox.local_backend import _children, _kill

    code = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    while True:\n"
        "        pass\n"
        "print(pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(server.stdout.readline())
    try:
        assert _children(server.pid) == [child]
        _kill(server)
        assert _ended(child), f"the forked test process {child} still runs"
        assert server.poll() is not None
    finally:  # never leave the loop running, whatever failed
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
        with contextlib.suppress(OSError):
            server.kill()


def _ended(pid: int) -> bool:
    """Has ``pid`` ended (gone, or a zombie until init reaps it) within 5 seconds?"""
    for _ in range(100):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False
