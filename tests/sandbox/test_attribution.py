"""Tampering is attributed by origin: what a framework or the repository's unchanged code does to
its own test objects is not tampering; what code from a file the patch changed does still is.

In the real docker sandbox (METHOD §6). Each benign class below is a false positive the grader
once had (Django's ``SimpleTestCase`` wrapping ``async def`` tests on the instance, pytest's
``TestCaseFunction.teardown`` clearing ``_obj``, a conftest wrapping tests, ``functools.wraps``
decorators, ``mock.patch``): its gold patch is a valid 1 with no tampering and its empty patch a
valid 0. The hostile variants install the same kind of wrapper from the patched module, or
through a generic wrapper of the standard library that never runs the test, and are caught.
"""

from __future__ import annotations

import pytest
from taskfactory import CONFIG, WEIGHTS

from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.grading.verdicts import judge
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CORE_BUG = "def double(x):\n    return x + x + 1\n\n\ndef triple(x):\n    return 3 * x\n"
CORE_FIXED = CORE_BUG.replace("x + x + 1", "x + x")

#: A stand-in for Django's SimpleTestCase and asgiref's AsyncToSync (unchanged support code of
#: the repository): an ``async def`` test method is replaced on the instance by a synchronous
#: wrapper before the test runs (Django's ``_setup_and_call``).
ASYNC_SUPPORT = """import asyncio
import functools
import inspect
import unittest


def logged(fn):  # a faithful wrapper, for a synchronous function
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


class AsyncToSync:
    def __init__(self, awaitable):
        self.awaitable = awaitable

    def __call__(self, *args, **kwargs):
        return asyncio.run(self.awaitable(*args, **kwargs))


class SimpleTestCase(unittest.TestCase):
    def __call__(self, result=None):
        method = getattr(self, self._testMethodName)
        if inspect.iscoroutinefunction(method):
            setattr(self, self._testMethodName, AsyncToSync(method))
        return super().__call__(result)
"""

ASYNC_TESTS = """from pkg.core import double, triple
from support.asynccase import SimpleTestCase


class AsyncTests(SimpleTestCase):
    async def test_double(self):
        self.assertEqual(double(2), 4)

    async def test_triple(self):
        self.assertEqual(triple(2), 6)

    def test_sync(self):
        self.assertEqual(triple(1), 3)
"""

UNITTEST_UNDER_PYTEST = """import unittest

from pkg.core import double, triple


class CoreTests(unittest.TestCase):
    def setUp(self):
        self.value = 2

    def test_double(self):
        self.assertEqual(double(self.value), 4)

    def test_triple(self):
        self.assertEqual(triple(self.value), 6)
"""

#: A conftest (not changed by any patch) that wraps every test function while it runs, once
#: with functools.wraps and once with a bare closure.
WRAPPING_CONFTEST = """import functools

import pytest


def _wrapped(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def _closure(fn):
    def call(*args, **kwargs):
        return fn(*args, **kwargs)

    return call


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    item.obj = _closure(_wrapped(item.obj))
    yield
"""

DECORATED_TESTS = """import functools
import json
from unittest import mock

import pkg.core
from pkg.core import double, triple


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def test_double():
    assert double(2) == 4


@mock.patch("pkg.core.triple", return_value=6)
def test_triple_mocked(fake):
    assert pkg.core.triple(5) == 6 and fake.called


class TestStatic:
    @staticmethod
    def test_static():
        assert double(3) == 6


def test_triple():
    with mock.patch.object(json, "dumps", return_value="x"):
        assert json.dumps(1) == "x"
    assert triple(2) == 6
"""


P = "tests/test_core.py"


def _task(name: str, tests: str, files: dict[str, str], f2p, p2p, runner="pytest") -> Task:
    return Task(
        instance_id=f"attribution__{name}",
        repo="attribution",
        problem_statement="double(2) returns 5, expected 4",
        patch=diff_trees({"pkg/core.py": CORE_BUG}, {"pkg/core.py": CORE_FIXED}),
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
        test_paths=["tests/test_core.py"],
        files={
            "pkg/__init__.py": "",
            "pkg/core.py": CORE_BUG,
            "tests/__init__.py": "",
            P: tests,
            **files,
        },
        suite="attribution",
        test_runner=runner,
    )


TASKS = {
    "django_like_async_wrapping_under_unittest": _task(
        "async_unittest",
        ASYNC_TESTS,
        {"support/__init__.py": "", "support/asynccase.py": ASYNC_SUPPORT},
        ["test_double (tests.test_core.AsyncTests)"],
        ["test_triple (tests.test_core.AsyncTests)", "test_sync (tests.test_core.AsyncTests)"],
        runner="unittest",
    ),
    "django_like_async_wrapping_under_pytest": _task(
        "async_pytest",
        ASYNC_TESTS,
        {"support/__init__.py": "", "support/asynccase.py": ASYNC_SUPPORT},
        [f"{P}::AsyncTests::test_double"],
        [f"{P}::AsyncTests::test_triple", f"{P}::AsyncTests::test_sync"],
    ),
    "unittest_testcase_under_pytest": _task(
        "testcase_pytest",
        UNITTEST_UNDER_PYTEST,
        {},
        [f"{P}::CoreTests::test_double"],
        [f"{P}::CoreTests::test_triple"],
    ),
    "conftest_wrapping_tests": _task(
        "conftest",
        DECORATED_TESTS,
        {"tests/conftest.py": WRAPPING_CONFTEST},
        [f"{P}::test_double", f"{P}::TestStatic::test_static"],
        [f"{P}::test_triple_mocked", f"{P}::test_triple"],
    ),
    "functools_wraps_and_mock_patch": _task(
        "decorated",
        DECORATED_TESTS,
        {},
        [f"{P}::test_double", f"{P}::TestStatic::test_static"],
        [f"{P}::test_triple_mocked", f"{P}::test_triple"],
    ),
}


def task_of(case: str) -> Task:
    return TASKS[case]


@pytest.fixture(scope="module")
def box(docker_ready):
    with make_sandbox("docker", CONFIG["sandbox"]) as sandbox:
        yield sandbox


PLANTED = diff_trees(
    {"pkg/core.py": CORE_BUG}, {"pkg/core.py": CORE_FIXED.replace("3 * x", "3 * x + 1")}
)


@pytest.mark.parametrize("case", sorted(TASKS))
def test_frameworks_own_wrapping_is_not_tampering(box, case):
    task = task_of(case)
    gold = grade_patch(task, task.patch, box, *WEIGHTS)
    assert (gold.verdict, gold.resolved, gold.tampering) == ("valid_1", 1, False), gold.reason
    assert not gold.sandbox.observations.tampering
    assert {t["status"] for t in gold.tests.values()} == {"passed"}
    empty = grade_tree(task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.tampering) == ("valid_0", False), empty.reason
    assert {empty.tests[i]["status"] for i in task.FAIL_TO_PASS} == {"failed"}
    assert {empty.tests[i]["status"] for i in task.PASS_TO_PASS} == {"passed"}
    # a planted bug in triple(): exactly the tests that call the real triple() flip (not the
    # one that mocks it)
    planted = grade_patch(task, PLANTED, box, *WEIGHTS)
    assert (planted.verdict, planted.tampering) == ("valid_0", False), planted.reason
    flipped = {i for i, t in planted.tests.items() if t["status"] != "passed"}
    assert flipped == {i for i in task.PASS_TO_PASS if "mocked" not in i}


#: Hostile patches: the module under test installs a wrapper on the test instance (unittest)
#: or on the collected item (pytest, from a gc callback after collection, as the hostile suite's
#: runtime forgeries do) that never runs the test. None fixes the bug.
HOSTILE_UNITTEST = {
    "own method from the patched module": """
import unittest as _u
_init = _u.TestCase.__init__
def _forged(self, methodName="runTest"):
    _init(self, methodName)
    if methodName.startswith("test_"):
        setattr(self, methodName, lambda: None)
_u.TestCase.__init__ = _forged
""",
    "the repository's own synchronous wrapper on a coroutine test (never awaited)": """
import inspect as _i, unittest as _u
_init = _u.TestCase.__init__
def _forged(self, methodName="runTest"):
    _init(self, methodName)
    method = getattr(self, methodName, None)
    if methodName.startswith("test_") and _i.iscoroutinefunction(method):
        from support.asynccase import logged
        setattr(self, methodName, logged(method))
_u.TestCase.__init__ = _forged
""",
    "standard-library wrapper that never runs the test": """
import contextlib as _c, unittest as _u
_init = _u.TestCase.__init__
def _forged(self, methodName="runTest"):
    _init(self, methodName)
    if methodName.startswith("test_"):
        setattr(self, methodName, _c.contextmanager(getattr(self, methodName)))
_u.TestCase.__init__ = _forged
""",
}
HOSTILE_PYTEST = {
    "test function replaced by the patched module": "lambda *a, **k: None",
    "standard-library wrapper that never runs the test": (
        "__import__('contextlib').contextmanager(_f)"
    ),
}
#: After collection (at the first report), every item's test function is replaced by INSTALL.
GC_SWAP = """
import gc as _gc
def _swap(phase, info):
    if phase != "start":
        return
    if not any(type(_o).__name__ == "TestReport" for _o in _gc.get_objects(0)):
        return
    for _o in _gc.get_objects():
        if type(_o).__name__ in ("Function", "TestCaseFunction") and "_obj" in vars(_o):
            _f = vars(_o)["_obj"]
            if _f is not None and getattr(_f, "__name__", "").startswith("test_"):
                _o._obj = INSTALL
    _gc.callbacks.remove(_swap)
    _gc.set_threshold(700, 10, 10)
_gc.set_threshold(1, 10, 10)
_gc.callbacks.append(_swap)
"""


#: The task's test functions replaced in their module and the items' cleared, again at every
#: collection of young objects, so that each report finds ``_obj`` cleared (pytest resolves it
#: anew from the module when the test is called); the sentinels are left alone.
MODULE_SWAP = """
import gc as _gc
_items = []
def _swap(phase, info):
    if phase != "start":
        return
    if not _items:
        if not any(type(_o).__name__ == "TestReport" for _o in _gc.get_objects(0)):
            return
        _items.extend(
            _o
            for _o in _gc.get_objects()
            if type(_o).__name__ == "Function" and _o.nodeid.startswith("tests/test_core.py::")
        )
    for _o in _items:
        if _o.__dict__.get("_obj") is not None:
            setattr(_o.parent.obj, _o.originalname, lambda *a, **k: None)
            _o._obj = None
_gc.set_threshold(1, 10, 10)
_gc.callbacks.append(_swap)
"""


def _hostile(code: str) -> str:
    return diff_trees({"pkg/core.py": CORE_BUG}, {"pkg/core.py": code.lstrip() + "\n" + CORE_BUG})


@pytest.mark.parametrize("route", sorted(HOSTILE_UNITTEST))
def test_a_wrapper_from_the_patch_on_a_unittest_instance_is_tampering(box, route):
    task = task_of("django_like_async_wrapping_under_unittest")
    report = grade_patch(task, _hostile(HOSTILE_UNITTEST[route]), box, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason
    assert report.resolved != 1
    assert _forged_records(task, report) == "valid_1"


@pytest.mark.parametrize("route", sorted(HOSTILE_PYTEST))
def test_a_test_function_swapped_by_the_patch_is_tampering(box, route):
    task = task_of("functools_wraps_and_mock_patch")
    code = GC_SWAP.replace("INSTALL", HOSTILE_PYTEST[route])
    report = grade_patch(task, _hostile(code), box, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason
    assert report.resolved != 1
    if route != "standard-library wrapper that never runs the test":
        assert _forged_records(task, report) == "valid_1"
    # (contextmanager's helper calls a plain function when called: refused all the same)


def test_a_cleared_function_resolved_from_a_swapped_module_attribute_is_tampering(box):
    task = task_of("functools_wraps_and_mock_patch")
    report = grade_patch(task, _hostile(MODULE_SWAP), box, *WEIGHTS)
    assert report.verdict == "unresolved" and report.tampering is True, report.reason
    assert report.resolved != 1
    assert _forged_records(task, report) == "valid_1"


def _forged_records(task, report) -> str:
    """The verdict the run's items alone would give: the forgery worked on them."""
    items = report.sandbox.observations.items
    return judge(task.FAIL_TO_PASS, task.PASS_TO_PASS, items, runner=task.test_runner).kind
