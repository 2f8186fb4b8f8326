"""Observe unittest-based runners (plain ``python -m unittest``, Django's ``runtests.py``).

Standard library only (mounted into the sandbox; never imports editcredit). :func:`install`
wraps ``unittest.TestSuite.run`` and ``unittest.TestCase.run`` so that the result object every
test reports to is seen through a *tap*: a proxy that records each call unittest makes
(``startTest``, ``addSuccess``, ``addFailure``, ``addError``, ``addSkip``,
``addExpectedFailure``, ``addUnexpectedSuccess``, ``addSubTest``, ``stopTest``) and forwards it
unchanged to the runner's own result. Whatever result class the runner uses (Django's, a
``TextTestResult``, a custom one), what is recorded is what unittest reported, never the text
the runner prints.

Each test becomes one item in the pytest observer's record format, named as SWE-bench names
Django's tests: ``test_name (module.Class)`` (a test class that overrides ``id()``, such as a
doctest case, is named by its ``id()``); a test with a docstring also gets an ``alias`` record
holding its first line (``shortDescription()``: Django's verbose output prints it in place of the
name, and some SWE-bench ids are such lines):

- ``setup`` failed: an error in ``setUp`` (or, with no test running, reported by the runner's
  own set-up, as Django's ``_pre_setup``), or in the ``setUpClass``/``setUpModule`` that kept the
  test from running (attributed to every test of that class or module); ``skipped``: skipped;
- ``call`` failed: a failure or error in the test method or one of its subtests; ``skipped``
  with ``wasxfail``: an expected failure; ``passed`` with ``wasxfail``: an unexpected success;
- ``teardown`` failed: an error in ``tearDown``, a cleanup, or reported after the test stopped
  (Django's ``_post_teardown``).

Which phase an error belongs to is read from its traceback (unittest's own ``_callSetUp`` /
``_callTestMethod`` / ``_callTearDown`` / ``doCleanups`` frames, or the user's ``setUp`` /
``tearDown`` on interpreters that call them directly). A test that calls ``sys.exit`` is an
error, as unittest reports it; one that ends the process (``os._exit``) never stops: its item
is incomplete and the session never finishes. Tests run by a test (a suite run inside a test)
are not recorded. Errors of ``tearDownClass``/``tearDownModule`` are recorded as
``collect_error`` records (the runner reports each test's own outcome unchanged).

Integrity: the unittest machinery through which an outcome travels, the tap's own methods and
the JSON encoder are snapshotted after installation and checked at every test's end; a test
method whose code comes from a file the patch changed, or a test carrying its own ``run``, is
tampering. The grader's sentinel tests (a module at a random path with one test that must pass
and one that must fail) are run once, after the first top-level suite.
"""

import importlib.util
import inspect
import os
import re
import sys
import time
import unittest
import unittest.case
import unittest.suite
import warnings

import machinery
import records

UNITTEST_DIR = os.path.dirname(os.path.abspath(unittest.__file__))
SETUP_FRAMES = frozenset({"_callSetUp", "setUp", "asyncSetUp"})
CALL_FRAMES = frozenset({"_callTestMethod"})
TEARDOWN_FRAMES = frozenset(
    {"_callTearDown", "doCleanups", "_callCleanup", "tearDown", "asyncTearDown"}
)
SETUP_FIXTURES = frozenset({"setUpClass", "setUpModule"})
_HOLDER = re.compile(r"^(\w+) \((.*)\)$")

GUARDED = (
    tuple(
        ("unittest.case", p)
        for p in (
            "TestCase",
            "TestCase.run",
            "TestCase.__call__",
            "TestCase._callSetUp",
            "TestCase._callTestMethod",
            "TestCase._callTearDown",
            "TestCase.doCleanups",
            "TestCase.subTest",
            "TestCase._addSkip",
            "TestCase._feedErrorsToResult",
            "TestCase._addExpectedFailure",
            "TestCase._addUnexpectedSuccess",
            "_addSkip",
            "_addError",
            "_Outcome",
            "_Outcome.__init__",
            "_Outcome.testPartExecutor",
            "_SubTest",
            "SkipTest",
            "expectedFailure",
            "_ShouldStop",
        )
    )
    + tuple(
        ("unittest.suite", p)
        for p in (
            "BaseTestSuite.__call__",
            "BaseTestSuite.__iter__",
            "TestSuite",
            "TestSuite.run",
            "TestSuite._handleClassSetUp",
            "TestSuite._handleModuleFixture",
            "TestSuite._tearDownPreviousClass",
            "TestSuite._handleModuleTearDown",
            "TestSuite._createClassOrModuleLevelException",
            "TestSuite._addClassOrModuleLevelException",
            "_ErrorHolder",
        )
    )
    + (
        ("json.encoder", "JSONEncoder.encode"),
        ("json.encoder", "JSONEncoder.iterencode"),
        ("json.encoder", "c_make_encoder"),
        ("json.encoder", "encode_basestring_ascii"),
        ("json.encoder", "encode_basestring"),
    )
)

_RANK = {"passed": 0, "skipped": 1, "failed": 2}


def _function(method):
    """The function of a class attribute (a classmethod's or staticmethod's too)."""
    return getattr(method, "__func__", method)


def _runs_coroutine(own, func, patched) -> bool:
    """Is ``own`` a synchronous wrapper, by unchanged code, of the coroutine method ``func``?"""
    coroutine = inspect.iscoroutinefunction
    if not coroutine(func) or coroutine(own) or getattr(own, "_is_coroutine", None) is not None:
        return False
    return machinery.wrapper_of(own, func, patched)


def strclass(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_id(test) -> str:
    """``test_name (module.Class)``; a test class with its own ``id()`` is named by it."""
    name = getattr(test, "_testMethodName", None)
    if isinstance(test, unittest.TestCase) and name and type(test).id is unittest.TestCase.id:
        return f"{name} ({strclass(type(test))})"
    try:
        return str(test.id())
    except Exception:  # noqa: BLE001
        return repr(test)


def phase_of(err) -> str:
    """setup | call | teardown: where the exception of ``err`` (exc_info) was raised."""
    tb = err[2] if err else None
    while tb is not None:
        code = tb.tb_frame.f_code
        name = code.co_name
        internal = os.path.dirname(os.path.abspath(code.co_filename or "?")) == UNITTEST_DIR
        if name in SETUP_FRAMES and (internal or name != "_callSetUp"):
            return "setup"
        if name in TEARDOWN_FRAMES:
            return "teardown"
        if internal and name in CALL_FRAMES:
            return "call"
        if not internal:
            return "call"
        tb = tb.tb_next
    return "call"


def _walk(suite) -> list:
    out, stack = [], [suite]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if isinstance(node, unittest.TestSuite) or hasattr(node, "_tests"):
            try:
                stack.extend(reversed(list(node)))
            except Exception:  # noqa: BLE001
                continue
        else:
            out.append(node)
    return out


def _scopes(test) -> "tuple[str, str]":
    cls = type(test)
    return strclass(cls), cls.__module__


class _Test:
    """What was reported for the running test."""

    def __init__(self, test, nodeid: str) -> None:
        self.test, self.nodeid = test, nodeid
        self.phases: "dict[str, tuple[str, str, dict]]" = {}
        self.start = time.monotonic()

    def add(self, when: str, outcome: str, message: str, **flags) -> None:
        prev = self.phases.get(when)
        if prev is None or _RANK[outcome] > _RANK[prev[0]]:
            self.phases[when] = (outcome, message, flags)


def install(emit, sentinel_path: str = "", patched: "frozenset[str]" = frozenset()):
    """Wrap unittest's suite and case ``run``; return the hook (``finish()`` at the end)."""
    suite_run = unittest.suite.TestSuite.run
    case_run = unittest.case.TestCase.run
    state = {
        "active": None,
        "last": None,
        "depth": 0,
        "collected": [],
        "started": {},
        "fixtures": {},
        "sentinels": False,
        "seen": set(),
        "index": -1,
        "wrapped": None,
    }
    SubTest, ErrorHolder = unittest.case._SubTest, unittest.suite._ErrorHolder  # noqa: N806

    def check() -> "list[str]":
        found = machinery.changes(guarded, own) + machinery.tracing(patched)
        return records.tampering(emit, state["seen"], found)

    def foreign(test, nodeid: str) -> None:
        found = []
        if "run" in getattr(test, "__dict__", {}) or "__call__" in getattr(test, "__dict__", {}):
            found.append(f"test item {nodeid}: own run")
        name = getattr(test, "_testMethodName", "")
        method = getattr(type(test), name, None) if name else None
        code = getattr(getattr(method, "__func__", method), "__code__", None)
        filename = getattr(code, "co_filename", "") or ""
        if filename and os.path.realpath(filename) in patched:
            found.append(f"test item {nodeid}: code from {filename}")
        own = getattr(test, "__dict__", {}).get(name) if name else None
        # Django's SimpleTestCase runs an ``async def`` test through async_to_sync(method) set
        # on the instance: a synchronous wrapper of a coroutine method, from code the patch did
        # not change. Nothing else may replace a test method on the instance.
        if own is not None and not _runs_coroutine(own, _function(method), patched):
            where = machinery.origin(own) or "?"
            found.append(f"test item {nodeid}: own {name} from {where}")
        elif own is not None:  # the wrapper must run the coroutine: checked at the test's end
            state["wrapped"] = getattr(_function(method), "__code__", None)
            del unawaited[:]
        records.tampering(emit, state["seen"], found)

    unawaited: list = []  # code of coroutines finalized without ever being awaited
    warn_unawaited = getattr(warnings, "_warn_unawaited_coroutine", None)

    def _warn_unawaited_coroutine(coro):
        code = getattr(coro, "cr_code", None)
        if code is not None and len(unawaited) < 64:
            unawaited.append(code)
        return warn_unawaited(coro)

    if warn_unawaited is not None:  # Python 3.8+: called for every coroutine never awaited
        warnings._warn_unawaited_coroutine = _warn_unawaited_coroutine

    def never_ran(nodeid: str) -> None:
        """A wrapper accepted in place of a coroutine test that never awaited it."""
        code, state["wrapped"] = state["wrapped"], None
        if code is not None and any(c is code for c in unawaited):
            found = [f"test item {nodeid}: the wrapper never ran its coroutine"]
            records.tampering(emit, state["seen"], found)

    def begin(test) -> None:
        nodeid = test_id(test)
        state["index"] += 1
        state["active"] = _Test(test, nodeid)
        state["started"][nodeid] = state["started"].get(nodeid, 0) + 1
        emit({"event": "item_start", "index": state["index"], "nodeid": nodeid})
        try:  # the docstring's first line: verbose runners print it, SWE-bench names tests by it
            alias = test.shortDescription()
        except Exception:  # noqa: BLE001
            alias = None
        if alias:
            emit({"event": "alias", "nodeid": nodeid, "alias": str(alias)[:500]})
        foreign(test, nodeid)

    def end() -> None:
        cur = state["active"]
        state["active"], state["last"] = None, cur
        never_ran(cur.nodeid)
        setup, call, teardown = (cur.phases.get(w) for w in ("setup", "call", "teardown"))
        duration = round(time.monotonic() - cur.start, 6)
        if setup is not None and setup[0] != "passed":
            emit(records.phase(cur.nodeid, "setup", setup[0], setup[1], **setup[2]))
            if teardown is not None:
                emit(records.phase(cur.nodeid, "teardown", teardown[0], teardown[1]))
            else:
                emit(records.phase(cur.nodeid, "teardown", "passed"))
        elif call is not None or teardown is not None:
            emit(records.phase(cur.nodeid, "setup", "passed"))
            # a failing tearDown after a body that reported nothing: the body passed
            call = call or ("passed", "", {})
            emit(records.phase(cur.nodeid, "call", call[0], call[1], duration=duration, **call[2]))
            teardown = teardown or ("passed", "", {})
            emit(records.phase(cur.nodeid, "teardown", teardown[0], teardown[1]))
        else:  # started and stopped with no outcome reported: incomplete
            emit(records.phase(cur.nodeid, "setup", "passed"))
        emit({"event": "item_end", "index": state["index"], "nodeid": cur.nodeid})
        if type(cur.test).__name__ == "_FailedTest":  # the loader's stand-in for a broken label
            failed = call or setup or ("", "", {})
            emit({"event": "collect_error", "nodeid": cur.nodeid, "message": failed[1]})
        check()

    def fixture(holder, outcome: str, message: str) -> None:
        match = _HOLDER.match(str(getattr(holder, "description", "")))
        kind, scope = match.groups() if match else ("", str(holder))
        if kind in SETUP_FIXTURES and outcome != "passed":
            state["fixtures"].setdefault(scope, (outcome, f"{kind}: {message}".strip()))
        elif outcome == "failed":
            emit({"event": "collect_error", "nodeid": f"{kind} ({scope})", "message": message})

    def subtest(sub, outcome: str, message: str = "") -> None:
        """A subtest of the running test as an item of its own: ``test_x (module.Class)
        (i=1)``, as unittest (and Django's verbose output) names it."""
        cur = state["active"]
        if cur is None or getattr(sub, "test_case", None) is not cur.test:
            return  # a test run inside a test
        try:
            nodeid = f"{cur.nodeid} {sub._subDescription()}"
        except Exception:  # noqa: BLE001 - a description that does not print
            return
        skipped = outcome == "skipped"
        emit(records.phase(nodeid, "setup", "skipped" if skipped else "passed", message))
        if not skipped:
            emit(records.phase(nodeid, "call", outcome, message))
            emit(records.phase(nodeid, "teardown", "passed"))

    def report(test, when: "str | None", outcome: str, err=None, message: str = "", **flags):
        if isinstance(test, SubTest):
            if outcome == "skipped":
                subtest(test, outcome, message)
            if outcome != "failed":  # a passing or skipped subtest: the test's own outcome
                return
            message = f"subtest {test._subDescription()}: {message}"
            test = test.test_case
        message = message or records.error_message(err)
        when = when or phase_of(err)
        cur = state["active"]
        if cur is not None:
            if test is cur.test:
                cur.add(when, outcome, message, **flags)
            return  # a test run inside a test
        if isinstance(test, ErrorHolder):
            fixture(test, outcome, message)
            return
        last = state["last"]
        if last is not None and test is last.test:
            if outcome == "failed":  # reported after stopTest (a runner's own teardown)
                emit(records.phase(last.nodeid, "teardown", "failed", message))
            return
        # reported for a test that never started: the runner's own set-up failed
        nodeid = test_id(test)
        state["started"][nodeid] = state["started"].get(nodeid, 0) + 1
        emit(records.phase(nodeid, "setup", outcome, message))
        emit(records.phase(nodeid, "teardown", "passed"))

    class Tap(records.Tap):
        """The runner's result, with every report recorded first."""

        __slots__ = ()

        def __delattr__(self, name) -> None:
            delattr(object.__getattribute__(self, "_inner"), name)

        @property
        def __class__(self):  # noqa: F811 - isinstance checks see the runner's result class
            return type(object.__getattribute__(self, "_inner"))

        def startTest(self, test):  # noqa: N802 - unittest's names
            if state["active"] is None and not isinstance(test, SubTest):
                begin(test)
            return self._inner.startTest(test)

        def stopTest(self, test):  # noqa: N802
            cur = state["active"]
            if cur is not None and test is cur.test:
                end()
            return self._inner.stopTest(test)

        def addSuccess(self, test):  # noqa: N802
            report(test, "call", "passed")
            return self._inner.addSuccess(test)

        def addFailure(self, test, err):  # noqa: N802
            report(test, None, "failed", err)
            return self._inner.addFailure(test, err)

        def addError(self, test, err):  # noqa: N802
            report(test, None, "failed", err)
            return self._inner.addError(test, err)

        def addSkip(self, test, reason):  # noqa: N802
            report(test, "setup", "skipped", message=str(reason))
            return self._inner.addSkip(test, reason)

        def addExpectedFailure(self, test, err):  # noqa: N802
            report(test, "call", "skipped", err, wasxfail=True)
            return self._inner.addExpectedFailure(test, err)

        def addUnexpectedSuccess(self, test):  # noqa: N802
            report(test, "call", "passed", message="unexpected success", wasxfail=True)
            return self._inner.addUnexpectedSuccess(test)

        def addSubTest(self, test, sub, err):  # noqa: N802
            if err is not None:
                report(sub, None, "failed", err)
            subtest(sub, "passed" if err is None else "failed", records.error_message(err))
            return self._inner.addSubTest(test, sub, err)

    def tapped(result):
        return result if result is None or type(result) is Tap else Tap(result)

    def run_sentinels() -> None:
        if state["sentinels"] or not sentinel_path:
            return
        state["sentinels"] = True
        name = os.path.splitext(os.path.basename(sentinel_path))[0]
        spec = importlib.util.spec_from_file_location(name, sentinel_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        tests = unittest.defaultTestLoader.loadTestsFromModule(module)
        suite_run(unittest.TestSuite([tests]), Tap(unittest.TestResult()))

    def attribute() -> None:
        """Collected tests that never started, under a failed setUpClass/setUpModule."""
        left = dict(state["started"])
        for nodeid, cls_scope, mod_scope in state["collected"]:
            if left.get(nodeid, 0) > 0:
                left[nodeid] -= 1
                continue
            fixture = state["fixtures"].get(cls_scope) or state["fixtures"].get(mod_scope)
            if fixture is None:
                continue
            state["started"][nodeid] = state["started"].get(nodeid, 0) + 1
            emit(records.phase(nodeid, "setup", fixture[0], fixture[1]))
            emit(records.phase(nodeid, "teardown", "passed"))

    def run(self, result, debug=False):
        top = state["depth"] == 0 and state["active"] is None
        if top:
            tests = [t for t in _walk(self) if not isinstance(t, ErrorHolder)]
            found = [(test_id(t), *_scopes(t)) for t in tests]
            state["collected"] += found
            emit({"event": "collected", "nodeids": [f[0] for f in found]})
        state["depth"] += 1
        try:
            return suite_run(self, tapped(result), debug)
        finally:
            state["depth"] -= 1
            if top:
                attribute()
                run_sentinels()

    def run_case(self, result=None):
        return case_run(self, tapped(result))

    run.__wrapped__ = suite_run
    run_case.__wrapped__ = case_run
    unittest.suite.TestSuite.run = run
    unittest.case.TestCase.run = run_case
    guarded = machinery.snapshot_of(
        (*GUARDED, ("warnings", "_warn_unawaited_coroutine")), ("json.encoder",)
    )
    own = {
        f"unittest_hook:{fn.__name__}": (fn, fn.__code__)
        for fn in (
            check,
            foreign,
            _warn_unawaited_coroutine,
            never_ran,
            begin,
            end,
            fixture,
            subtest,
            report,
            tapped,
            run,
            run_case,
            attribute,
            emit,
            *(v for k, v in vars(Tap).items() if callable(v) and not k.startswith("__")),
        )
    }

    class Hook:
        def finish(self) -> bool:
            """Run the sentinels if no suite ran them; True when the machinery is intact."""
            if state["depth"] == 0 and state["active"] is None:
                run_sentinels()
            return not (check() or state["seen"])

        def ran(self) -> bool:
            return True

    return Hook()
