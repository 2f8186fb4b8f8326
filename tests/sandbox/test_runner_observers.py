"""Non-pytest runners observed in real runs: unittest's result hook and SymPy's reporter hook,
through the local and the docker backends (METHOD §6's strict verdicts on their records)."""

from __future__ import annotations

import pytest
from taskfactory import WEIGHTS

from editcredit.data.task import Task
from editcredit.grading.grader import grade_tree
from editcredit.sandbox.patches import diff_trees
from editcredit.suites.image_runner_repos import _BIN_TEST, _RUNTESTS_SYMPY, _SYMPY_INIT

UNITTEST_EDGES = '''import sys
import unittest

from pkg.core import add


class Arith(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(add(1, 2), 3)

    def test_fails(self):
        self.assertEqual(add(1, 1), 3)

    def test_documented(self):
        """Adds documented numbers."""
        self.assertEqual(add(2, 2), 4)

    def test_raises(self):
        raise ValueError("boom")

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)

    def test_subtests_ok(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertEqual(add(i, 0), i)

    @unittest.skip("not today")
    def test_skipped(self):
        raise AssertionError("never runs")

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        self.assertEqual(1, 1)

    def test_exit(self):
        sys.exit(3)

    def test_inner_run(self):
        class Inner(unittest.TestCase):
            def test_inner_fails(self):
                raise AssertionError("inner")

        inner = unittest.TestResult()
        unittest.TestSuite([Inner("test_inner_fails")]).run(inner)
        self.assertEqual(len(inner.failures), 1)


class SetUpError(unittest.TestCase):
    def setUp(self):
        raise RuntimeError("setUp")

    def test_a(self):
        pass


class TearDownError(unittest.TestCase):
    def tearDown(self):
        raise RuntimeError("tearDown")

    def test_b(self):
        pass


class ClassSetUpError(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("setUpClass")

    def test_c(self):
        pass

    def test_d(self):
        pass


class ClassSkipped(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise unittest.SkipTest("no backend")

    def test_e(self):
        pass


class RunnerSetUp(unittest.TestCase):
    """Reports as Django's SimpleTestCase does: its own set-up and teardown around run()."""

    def __call__(self, result=None):
        if self._testMethodName == "test_pre_setup_error":
            try:
                raise RuntimeError("_pre_setup")
            except RuntimeError:
                result.addError(self, sys.exc_info())
            return None
        super().__call__(result)
        if self._testMethodName == "test_post_teardown_error":
            try:
                raise RuntimeError("_post_teardown")
            except RuntimeError:
                result.addError(self, sys.exc_info())
        return None

    def test_pre_setup_error(self):
        pass

    def test_post_teardown_error(self):
        pass

    def test_runner_ok(self):
        pass
'''
M = "tests.test_edges"
WANT = {
    f"test_ok ({M}.Arith)": "passed",
    f"{M}.Arith.test_fails": "failed",  # unittest's dotted id names the same test
    "Adds documented numbers.": "passed",  # a docstring line, as SWE-bench names some tests
    f"test_raises ({M}.Arith.test_raises)": "failed",  # and Python 3.11's spelling
    f"test_subtests ({M}.Arith)": "failed",
    f"test_subtests_ok ({M}.Arith)": "passed",
    f"test_skipped ({M}.Arith)": "skipped",
    f"test_xfail ({M}.Arith)": "xfail",
    f"test_xpass ({M}.Arith)": "xpass",
    f"test_exit ({M}.Arith)": "failed",  # sys.exit in a test is unittest's error
    f"test_inner_run ({M}.Arith)": "passed",
    f"test_a ({M}.SetUpError)": "error",
    f"test_b ({M}.TearDownError)": "error",
    f"test_c ({M}.ClassSetUpError)": "error",
    f"test_d ({M}.ClassSetUpError)": "error",
    f"test_e ({M}.ClassSkipped)": "skipped",
    f"test_pre_setup_error ({M}.RunnerSetUp)": "error",
    f"test_post_teardown_error ({M}.RunnerSetUp)": "error",
    f"test_runner_ok ({M}.RunnerSetUp)": "passed",
    f"test_inner_fails ({M}.Inner)": "missing",  # run by a test: not the run's test
    f"test_nowhere ({M}.Arith)": "missing",
}
CORE = "def add(a, b):\n    return a + b\n"


def unittest_task(tests: str, f2p: list[str], p2p: list[str], runner: str = "unittest") -> Task:
    return Task(
        instance_id=f"runner__{runner}",
        repo="runner",
        problem_statement="p",
        patch="x",
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
        test_paths=["tests/test_edges.py"],
        files={
            "pkg/__init__.py": "",
            "pkg/core.py": CORE,
            "tests/__init__.py": "",
            "tests/test_edges.py": tests,
        },
        suite="runners",
        test_runner=runner,
    )


@pytest.fixture(params=["local", "docker"])
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def test_unittest_outcomes_are_unittests_own(sandbox):
    ids = list(WANT)
    report = grade_tree(unittest_task(UNITTEST_EDGES, ids[:1], ids[1:]), "", sandbox, *WEIGHTS)
    got = {i: t["status"] for i, t in report.tests.items()}
    assert got == WANT
    obs = report.sandbox.observations
    assert obs.finished and obs.returned and not obs.tampering and report.tampering is False
    assert report.verdict == "valid_0"  # failed calls are independent witnesses
    roles = report.sandbox.sentinels
    status = {i.nodeid: [p.outcome for p in i.phases] for i in report.sandbox.sentinel_items}
    assert sorted(roles.values()) == ["must_fail", "must_pass"]
    for nodeid, role in roles.items():
        assert status[nodeid][1] == ("passed" if role == "must_pass" else "failed")


def test_unittest_passing_run_is_valid_1_and_os_exit_is_incomplete(local_sandbox):
    tests = UNITTEST_EDGES.split("class SetUpError")[0]
    ok = [f"test_ok ({M}.Arith)", f"test_subtests_ok ({M}.Arith)"]
    report = grade_tree(unittest_task(tests, ok[:1], ok[1:]), "", local_sandbox, *WEIGHTS)
    assert report.verdict == "valid_1", report.reason
    dying = tests.replace("sys.exit(3)", "import os; os._exit(0)")
    exits = f"test_exit ({M}.Arith)"  # runs first (unittest sorts by name)
    report = grade_tree(unittest_task(dying, ok[:1], [*ok[1:], exits]), "", local_sandbox, *WEIGHTS)
    statuses = {i: t["status"] for i, t in report.tests.items()}
    assert report.verdict == "unresolved" and not report.sandbox.observations.finished
    assert statuses == {ok[0]: "missing", ok[1]: "missing", exits: "incomplete"}
    assert report.tampering is False  # sentinels never reached: no verdict on them


LOOPS = """import unittest


class Loops(unittest.TestCase):
    def test_fast(self):
        pass

    def test_spins(self):
        while True:
            pass

    def test_zz_after(self):
        pass
"""


def test_a_test_past_its_own_limit_is_a_reproduced_timeout():
    """Per-test limits (here the floor: no gold times): the spinning test is killed with the
    run, rerun alone, killed again: a FAILED call with reason timeout, a valid 0."""
    from editcredit.sandbox.limits import limit_settings
    from editcredit.sandbox.local_backend import LocalSandbox

    spins, fast = f"test_spins ({M}.Loops)", f"test_fast ({M}.Loops)"
    task = unittest_task(LOOPS, [spins], [fast])
    settings = limit_settings({"floor_s": 1.0, "measure_gold": False})
    with LocalSandbox(timeout_factor=1.0, limits=settings, mode="warm") as box:
        report = grade_tree(task, "", box, *WEIGHTS)
    assert report.verdict == "valid_0", report.reason
    assert {i: t["status"] for i, t in report.tests.items()} == {spins: "timeout", fast: "passed"}
    (timeout,) = report.sandbox.timeouts
    assert timeout.nodeid == spins and timeout.reproduced and timeout.limit_s == 1.0


def test_a_label_that_does_not_import_is_a_collect_error(local_sandbox):
    task = unittest_task(UNITTEST_EDGES, [f"test_ok ({M}.Arith)"], [])
    broken = {**task.files, "tests/test_broken.py": "import no_such_module\n"}
    paths = ["tests/test_edges.py", "tests/test_broken.py"]
    task = task.model_copy(update={"files": broken, "test_paths": paths})
    report = grade_tree(task, "", local_sandbox, *WEIGHTS)
    (error,) = report.sandbox.observations.collect_errors
    assert "no_such_module" in error["message"] and "test_broken" in error["nodeid"]
    assert report.verdict == "valid_1", report.reason  # the other file's tests still ran


FORGERY = """

import unittest.case as _case

_run = _case.TestCase.run


def _quiet_run(self, result=None):
    class _Quiet:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def addFailure(self, test, err):
            self.inner.addSuccess(test)

        addError = addFailure

    return _run(self, _Quiet(result) if result is not None else None)


_case.TestCase.run = _quiet_run
"""


def test_unittest_forged_reports_are_tampering(sandbox):
    """A patch that swallows failures at import time: unresolved, no score."""
    tests = "import unittest\n\nimport pkg.core\n\n\nclass T(unittest.TestCase):\n"
    tests += "    def test_fixed(self):\n        self.assertEqual(pkg.core.add(2, 2), 5)\n"
    task = unittest_task(tests, [f"test_fixed ({M}.T)"], [])
    patch = diff_trees({"pkg/core.py": CORE}, {"pkg/core.py": CORE + FORGERY})
    report = grade_tree(task, patch, sandbox, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason
    assert report.Y is None and "unittest.case:TestCase.run" in report.reason


SYMPY_TESTS = """from sympy.utilities.runtests import SKIP, XFAIL


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    assert 1 + 1 == 3


def test_exception():
    raise KeyError("boom")


@SKIP("slow")
def test_skip():
    pass


@XFAIL
def test_xfail():
    assert False


@XFAIL
def test_xpass():
    assert True
"""
SYMPY_FILES = {
    "bin/test": _BIN_TEST,
    "sympy/__init__.py": _SYMPY_INIT,
    "sympy/utilities/__init__.py": "",
    "sympy/utilities/runtests.py": _RUNTESTS_SYMPY,
    "sympy/core/__init__.py": "",
    "sympy/core/tests/__init__.py": "",
    "sympy/core/tests/test_edges.py": SYMPY_TESTS,
    "sympy/core/tests/test_broken.py": "import no_such_module\n\n\ndef test_never():\n    pass\n",
}


def sympy_task(f2p: list[str], p2p: list[str], files=None) -> Task:
    return Task(
        instance_id="runner__sympy",
        repo="runner",
        problem_statement="p",
        patch="x",
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
        test_paths=["sympy/core/tests/test_edges.py", "sympy/core/tests/test_broken.py"],
        files=files or SYMPY_FILES,
        suite="runners",
        test_runner="sympy",
    )


def test_sympy_reporter_outcomes(sandbox):
    want = {
        "test_pass": "passed",
        "sympy/core/tests/test_edges.py::test_fail": "failed",
        "test_exception": "failed",
        "test_skip": "skipped",
        "test_xfail": "xfail",
        "test_xpass": "xpass",
        "test_never": "missing",  # its file does not import
    }
    ids = list(want)
    report = grade_tree(sympy_task(ids[:1], ids[1:]), "", sandbox, *WEIGHTS)
    assert {i: t["status"] for i, t in report.tests.items()} == want
    obs = report.sandbox.observations
    assert obs.finished and obs.returned and not obs.tampering
    assert len(obs.collect_errors) == 1
    assert obs.collect_errors[0]["nodeid"].endswith("sympy/core/tests/test_broken.py")
    assert "ModuleNotFoundError" in obs.collect_errors[0]["message"]
    assert len(report.sandbox.sentinel_items) == 2 and report.tampering is False


def test_sympy_selection_and_forged_reporter(local_sandbox):
    task = sympy_task(["test_pass"], [])
    run = local_sandbox.grade(task, "", ["test_pass"])  # the agent's visible tests
    assert [i.nodeid for i in run.observations.items] == [
        "sympy/core/tests/test_edges.py::test_pass"
    ]
    assert len(run.sentinel_items) == 2  # the keyword filter does not hide them
    forged = SYMPY_FILES["sympy/__init__.py"] + (
        "\n\nimport sympy.utilities.runtests as _rt\n"
        "_rt.SymPyTests.test_file = lambda self, *a, **k: None\n"
    )
    patch = diff_trees(
        {"sympy/__init__.py": SYMPY_FILES["sympy/__init__.py"]}, {"sympy/__init__.py": forged}
    )
    report = grade_tree(task, patch, local_sandbox, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason


def test_runner_commands_labels_and_ids():
    from editcredit.sandbox.runners import canonical_id, command_for, protected_files

    django = unittest_task("", ["test_a (x.tests.T)"], [], runner="django")
    django = django.model_copy(update={"test_paths": ["tests/x/tests.py"]})
    assert command_for(django, None)[-1] == "x.tests"
    assert command_for(django, ["test_a (x.tests.T)"])[-1] == "x.tests.T.test_a"
    assert command_for(django, ["test_a (x.tests.T)", "A docstring."])[-1] == "x.tests.T.test_a"
    with pytest.raises(ValueError, match="none of the selected test ids"):
        command_for(django, ["A docstring."])
    assert protected_files(django) == ["tests/runtests.py"]
    same = {"test_a (m.C)", "m.C.test_a", "test_a (m.C.test_a)"}
    assert {canonical_id("unittest", i) for i in same} == {"test_a (m.C)"}
    sympy = sympy_task(["test_pass"], [])
    assert command_for(sympy, ["a.py::test_pass"])[-2:] == ["-k", "test_pass"]
    assert protected_files(sympy) == [
        "bin/test",
        "sympy/testing/runtests.py",
        "sympy/utilities/runtests.py",
    ]


OWN_VERDICTS = r"""
import json, sys, unittest
sys.path.insert(0, sys.argv[1])
result = unittest.TestResult()
suite = unittest.defaultTestLoader.loadTestsFromName("tests.test_edges")
started = []
start = result.startTest
result.startTest = lambda t: (started.append(t), start(t))
subtests = []
add_subtest = result.addSubTest
result.addSubTest = lambda t, sub, err: (subtests.append((t, sub, err)), add_subtest(t, sub, err))
suite.run(result)
def name(t):
    t = getattr(t, "test_case", t)
    return f"{t._testMethodName} ({type(t).__module__}.{type(t).__qualname__})"
out = {name(t): "ok" for t in started if not hasattr(t, "description")}
for kind, pairs in (("FAIL", result.failures), ("ERROR", result.errors)):
    for t, _ in pairs:
        if not hasattr(t, "description"):
            out[name(t)] = kind
for t, _ in result.skipped:
    if not hasattr(t, "description") and out.get(name(t)) == "ok":
        out[name(t)] = "skip"
for t, _ in result.expectedFailures:
    out[name(t)] = "expected failure"
for t in result.unexpectedSuccesses:
    out[name(t)] = "unexpected success"
for t, sub, err in subtests:  # each subtest on its own, as unittest names it
    kind = "ok" if err is None else "FAIL" if issubclass(err[0], t.failureException) else "ERROR"
    out[f"{name(t)} {sub._subDescription()}"] = kind
print(json.dumps(out))
"""
#: unittest's own verdict -> the status the observer must give
AGREES = {
    "ok": {"passed"},
    "FAIL": {"failed"},
    "ERROR": {"failed", "error"},
    "skip": {"skipped"},
    "expected failure": {"xfail"},
    "unexpected success": {"xpass"},
}


def test_subtests_are_items_of_their_own(local_sandbox):
    """Each subtest is observed as unittest names it (``test_x (module.Class) (i=1)``, the name
    Django's verbose output prints for a failing one); the test keeps the worst outcome."""
    sub = [f"test_subtests ({M}.Arith) (i={i})" for i in range(3)]
    ok = [f"test_subtests_ok ({M}.Arith) (i={i})" for i in range(3)]
    task = unittest_task(UNITTEST_EDGES, [sub[2]], [sub[0], sub[1], *ok])
    report = grade_tree(task, "", local_sandbox, *WEIGHTS)
    assert {i: t["status"] for i, t in report.tests.items()} == {
        sub[0]: "passed",
        sub[1]: "passed",
        sub[2]: "failed",
        **{i: "passed" for i in ok},
    }
    assert report.verdict == "valid_0"
    statuses = {i.nodeid: i for i in report.sandbox.observations.items}
    assert f"test_subtests ({M}.Arith)" in statuses


def test_every_outcome_agrees_with_unittests_own_result(local_sandbox, tmp_path):
    """The same tests run by unittest itself on the host: every test it ran has the status
    its own result gives it; those it never ran (a failed setUpClass) are not passed."""
    import json
    import subprocess
    import sys

    task = unittest_task(UNITTEST_EDGES, [f"test_ok ({M}.Arith)"], [])
    for rel, text in task.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    proc = subprocess.run(
        [sys.executable, "-c", OWN_VERDICTS, str(tmp_path)], capture_output=True, text=True
    )
    own = json.loads(proc.stdout.splitlines()[-1])
    report = grade_tree(task, "", local_sandbox, *WEIGHTS)
    items = {i.nodeid: i for i in report.sandbox.observations.items}
    from editcredit.grading.verdicts import item_status

    ours = {n: item_status(i) for n, i in items.items()}
    assert set(own) <= set(ours)
    for name, verdict in own.items():
        assert ours[name] in AGREES[verdict], (name, verdict, ours[name])
    for name in set(ours) - set(own):  # never run by unittest: a class or module fixture failed
        assert ours[name] in ("error", "skipped"), name


def _interpreter(name: str) -> str:
    """``name`` on PATH, or a pyenv installation of it (pyenv's shims answer only for the
    selected version)."""
    import glob
    import os
    import shutil
    import subprocess

    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    version = name.removeprefix("python")
    found = [shutil.which(name), *sorted(glob.glob(f"{root}/versions/{version}.*/bin/{name}"))]
    for exe in filter(None, found):
        if subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
            return exe
    pytest.skip(f"no {name} on this machine")


@pytest.mark.parametrize("name", ["python3.6", "python3.8", "python3.12", "python3.13"])
def test_the_guest_observes_the_same_on_older_and_newer_interpreters(name, monkeypatch):
    """Task images bring their own interpreter (Python 3.6 in older SWE-bench Django images):
    the guest runs there, unittest's internals differ, the statuses do not."""
    import sys

    from editcredit.sandbox.limits import limit_settings
    from editcredit.sandbox.local_backend import LocalSandbox

    monkeypatch.setattr(sys, "executable", _interpreter(name))
    ids = list(WANT)
    with LocalSandbox(timeout_factor=1.0, limits=limit_settings(None), mode="warm") as box:
        report = grade_tree(unittest_task(UNITTEST_EDGES, ids[:1], ids[1:]), "", box, *WEIGHTS)
        assert {i: t["status"] for i, t in report.tests.items()} == WANT
        assert report.sandbox.observations.finished and report.tampering is False
        report = grade_tree(sympy_task(["test_pass"], ["test_xfail"]), "", box, *WEIGHTS)
        assert (report.verdict, report.reason) == ("unresolved", "xfail: test_xfail")


REAL_SYMPY_DRIVER = """import sys

from sympy.testing.runtests import PyTestReporter, SymPyTests

tests = SymPyTests(PyTestReporter(verbose=True, colors=False))
tests._testfiles.extend(sys.argv[1:])
sys.exit(not tests.test(sort=True))
"""
REAL_SYMPY_TESTS = """from sympy import Rational, symbols
from sympy.testing.pytest import SKIP, XFAIL

x = symbols("x")


def test_pass():
    assert (x + x).equals(2 * x)


def test_fail():
    assert Rational(1, 3) + Rational(1, 3) == Rational(1, 2)


def test_exception():
    raise KeyError("boom")


@SKIP("slow")
def test_skip():
    pass


@XFAIL
def test_xfail():
    assert False


@XFAIL
def test_xpass():
    assert True
"""


def test_sympys_own_runner_and_reporter(local_sandbox):
    """SymPy's real ``SymPyTests`` and ``PyTestReporter`` (the installed package) on a test
    file: each outcome as its reporter is told it."""
    pytest.importorskip("sympy.testing.runtests")
    want = {
        "test_pass": "passed",
        "test_fail": "failed",
        "test_exception": "failed",
        "test_skip": "skipped",
        "test_xfail": "xfail",
        "test_xpass": "xpass",
    }
    ids = list(want)
    task = Task(
        instance_id="runner__realsympy",
        repo="runner",
        problem_statement="p",
        patch="x",
        FAIL_TO_PASS=ids[:1],
        PASS_TO_PASS=ids[1:],
        test_paths=["checks/test_real.py"],
        files={"run_sympy.py": REAL_SYMPY_DRIVER, "checks/test_real.py": REAL_SYMPY_TESTS},
        suite="runners",
        test_runner="sympy",
        test_command=["python3", "run_sympy.py"],
    )
    report = grade_tree(task, "", local_sandbox, *WEIGHTS)
    assert {i: t["status"] for i, t in report.tests.items()} == want, report.sandbox.log_tail
    assert report.sandbox.observations.finished and report.tampering is False
    assert len(report.sandbox.sentinel_items) == 2


#: A SymPy whose ``test()`` runs pytest, as ``sympy.testing.runtests_pytest`` does (SymPy 1.13+);
#: the same ``bin/test`` drives it.
PYTEST_SYMPY_INIT = '''"""A tiny package whose tests run through pytest, as SymPy 1.13's do."""


def test(*paths, **kwargs):
    import pytest

    return pytest.main(["--rootdir", __file__.rsplit("/", 2)[0], *paths]) == 0
'''
PYTEST_SYMPY_TESTS = """def test_pass():
    assert 1 + 1 == 2


def test_fail():
    assert 1 + 1 == 3
"""


def test_sympy_through_pytest_is_observed_and_a_bypass_is_tampering(sandbox):
    files = {
        "bin/test": _BIN_TEST,
        "sympy/__init__.py": PYTEST_SYMPY_INIT,
        "sympy/core/__init__.py": "",
        "sympy/core/tests/__init__.py": "",
        "sympy/core/tests/test_edges.py": PYTEST_SYMPY_TESTS,
        "sympy/core/tests/test_broken.py": "def test_never():\n    pass\n",
    }
    path = "sympy/core/tests/test_edges.py"
    task = sympy_task(["test_pass"], [f"{path}::test_fail"], files=files)
    report = grade_tree(task, "", sandbox, *WEIGHTS)
    assert {i: t["status"] for i, t in report.tests.items()} == {
        "test_pass": "passed",
        f"{path}::test_fail": "failed",
    }
    assert report.verdict == "valid_0" and report.tampering is False, report.reason
    assert {i.nodeid for i in report.sandbox.observations.items} >= {
        f"{path}::test_pass",
        f"{path}::test_fail",
    }
    assert len(report.sandbox.sentinel_items) == 2
    # the code under test gives pytest.main back its own: the observer is bypassed
    bypass = (
        PYTEST_SYMPY_INIT + "\n\nimport _pytest.config, pytest\npytest.main = _pytest.config.main\n"
    )
    patch = diff_trees({"sympy/__init__.py": PYTEST_SYMPY_INIT}, {"sympy/__init__.py": bypass})
    report = grade_tree(task, patch, sandbox, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason
