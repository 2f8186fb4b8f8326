"""A crafted task and patches that try to game grading from inside the test process.

The task (``toy__primes``) has its bug in ``sum_of_multiples`` (the FAIL_TO_PASS test), a
prime test and a fixture that call the module's code, and a test module that imports the
module at collection. Every patch here is hostile: a loop (in code a test calls, in code a
fixture calls, at import) or a forgery of pytest's reports (none of them fixes the bug, so an
honest grading is a valid 0). Shared by tests/sandbox/test_hostile_patches.py and
benchmarks/bench_grading_load.py.
"""

from __future__ import annotations

from editcredit.data.task import Task
from editcredit.sandbox.patches import diff_trees

PRIMES_BUG = """def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def primes_below(n):
    return [k for k in range(n) if is_prime(k)]


def sum_of_multiples(limit, factors):
    return sum(x for x in range(limit + 1) if any(x % f == 0 for f in factors if f))
"""
PRIMES_FIXED = PRIMES_BUG.replace("range(limit + 1)", "range(limit)")
PRIMES_TESTS = """import pytest

from primes import is_prime, primes_below, sum_of_multiples


@pytest.fixture
def small_primes():
    return primes_below(20)


def test_sum_of_multiples():
    assert sum_of_multiples(10, [3, 5]) == 23


def test_is_prime():
    assert is_prime(97) and not is_prime(91)


def test_small_primes(small_primes):
    assert small_primes == [2, 3, 5, 7, 11, 13, 17, 19]


def test_zero_factor():
    assert sum_of_multiples(4, [0, 2]) == 2
"""


def make_primes_task(timeout_s: float = 20.0) -> Task:
    return Task(
        instance_id="toy__primes__sum_of_multiples",
        repo="toy/primes",
        problem_statement="sum_of_multiples(10, [3, 5]) returns 33, expected 23",
        patch=diff_trees({"primes.py": PRIMES_BUG}, {"primes.py": PRIMES_FIXED}),
        FAIL_TO_PASS=["test_primes.py::test_sum_of_multiples", "test_primes.py::test_zero_factor"],
        PASS_TO_PASS=["test_primes.py::test_is_prime", "test_primes.py::test_small_primes"],
        test_paths=["test_primes.py"],
        files={"primes.py": PRIMES_BUG, "test_primes.py": PRIMES_TESTS},
        timeout_s=timeout_s,
        suite="toy",
    )


def _patch(new_source: str) -> str:
    return diff_trees({"primes.py": PRIMES_BUG}, {"primes.py": new_source})


#: Code put at the top of the module under test (no fix): each forges passing reports.
FORGERIES = {
    # the example: report construction monkeypatched at import of the module under test
    "TestReport.from_item_and_call": """
import _pytest.reports as _r
_orig = _r.TestReport.from_item_and_call.__func__
def _forged(cls, item, call):
    rep = _orig(cls, item, call)
    rep.outcome, rep.longrepr = "passed", None
    return rep
_r.TestReport.from_item_and_call = classmethod(_forged)
""",
    # only the task's own tests are forged: the sentinels report honestly
    "TestReport.__init__ for the task's tests only": """
import _pytest.reports as _r
_init = _r.TestReport.__init__
def _forged(self, nodeid, *a, **k):
    _init(self, nodeid, *a, **k)
    if nodeid.startswith("test_primes.py::"):
        self.outcome, self.longrepr = "passed", None
_r.TestReport.__init__ = _forged
""",
    "runner.call_and_report": """
import _pytest.runner as _run
_orig = _run.call_and_report
def _forged(item, when, log=True, **kw):
    call = _run.CallInfo.from_call(lambda: None, when=when)
    rep = item.ihook.pytest_runtest_makereport(item=item, call=call)
    if log:
        item.ihook.pytest_runtest_logreport(report=rep)
    return rep
_run.call_and_report = _forged
""",
    "plugin registered from the code under test": """
import gc as _gc
import pytest as _pytest
class _Forger:
    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        rep.outcome, rep.longrepr = "passed", None
for _o in _gc.get_objects():
    if type(_o).__name__ == "Config" and hasattr(_o, "pluginmanager"):
        _o.pluginmanager.register(_Forger(), "forger")
        break
""",
    "pytest's python plugin unregistered (tests pass without running)": """
import gc as _gc
for _o in _gc.get_objects():
    if type(_o).__name__ == "Config" and hasattr(_o, "pluginmanager"):
        _pm = _o.pluginmanager
        _python = _pm.get_plugin("python")
        _orig = _python.pytest_pyfunc_call
        _pm.unregister(name="python")
        import types as _types
        _shim = _types.ModuleType("_shim")
        for _name in dir(_python):
            if _name.startswith("pytest_") and _name != "pytest_pyfunc_call":
                setattr(_shim, _name, getattr(_python, _name))
        _pm.register(_shim, "python")
        break
""",
    "Function.runtest": """
import _pytest.python as _py
_py.Function.runtest = lambda self: None
""",
    "pluggy _multicall": """
import pluggy._callers as _c, pluggy._manager as _m
_orig = _c._multicall
def _forged(hook_name, hook_impls, kwargs, firstresult):
    res = _orig(hook_name, hook_impls, kwargs, firstresult)
    if hook_name == "pytest_runtest_makereport" and res is not None:
        res.outcome, res.longrepr = "passed", None
    return res
_c._multicall = _forged
for _o in __import__("gc").get_objects():
    if isinstance(_o, _m.PluginManager):
        _o._inner_hookexec = _forged
""",
    "observer writer and JSON encoder": """
import json.encoder as _je, sys as _sys
_orig = _je.JSONEncoder.encode
def _forged(self, o):
    return _orig(self, o).replace('"outcome": "failed"', '"outcome": "passed"')
_je.JSONEncoder.encode = _forged
_obs = _sys.modules.get("observer")
if _obs is not None:
    _obs._encode = lambda o: _orig(_je.JSONEncoder(sort_keys=True), o).replace(
        '"outcome": "failed"', '"outcome": "passed"')
""",
    "test functions swapped after collection": """
import gc as _gc, sys as _sys
def _swap(phase, info):  # in the allocating thread, at the first test's setup report
    if phase != "start" or not any(type(_o).__name__ == "TestReport" for _o in _gc.get_objects(0)):
        return
    mod = _sys.modules["test_primes"]
    for name in dir(mod):
        if name.startswith("test_"):
            getattr(mod, name).__code__ = (lambda *a, **k: None).__code__
    _gc.callbacks.remove(_swap)
    _gc.set_threshold(700, 10, 10)
_gc.set_threshold(1, 10, 10)  # every young object is seen at the next allocation
_gc.callbacks.append(_swap)
""",
    "instance runtest replaced on every item": """
import gc as _gc
def _swap(phase, info):  # in the thread that allocates, before any item can run: no race
    if phase == "start":
        for _o in _gc.get_objects(0):
            if type(_o).__name__ == "Function" and "runtest" not in vars(_o):
                _o.runtest = lambda: None
_gc.set_threshold(50, 10, 10)  # a young object is seen within 50 allocations of its making
_gc.callbacks.append(_swap)
""",
    "trace function rewriting pytest's locals": """
import sys as _sys
def _tracer(frame, event, arg):
    if frame.f_code.co_name == "from_item_and_call":
        def _local(frame, event, arg):
            if event == "line" and frame.f_locals.get("outcome") == "failed":
                frame.f_locals["outcome"] = "passed"
                frame.f_locals["longrepr"] = None
            return _local
        return _local
    return None
_sys.settrace(_tracer)
import threading as _threading
_threading.settrace(_tracer)
""",
    "records forged into the observer's channel, then os._exit": """
import gc as _gc, json as _json, os as _os, types as _types
def _forge():
    emit = None
    for _o in _gc.get_objects():
        if isinstance(_o, _types.FunctionType) and _o.__name__ == "emit" and _o.__closure__:
            emit = _o
    if emit is None:
        return
    for test in ("test_sum_of_multiples", "test_is_prime", "test_small_primes",
                 "test_zero_factor"):
        for when in ("setup", "call", "teardown"):
            emit({"event": "phase", "nodeid": "test_primes.py::" + test, "when": when,
                  "outcome": "passed"})
    emit({"event": "session_finish", "exitstatus": 0, "machinery": "intact"})
    emit({"event": "main_returned", "exitstatus": 0})
    _os._exit(0)
_forge()
""",
    "observation and done files overwritten": """
import json as _json, os as _os
_log = _os.readlink("/proc/self/fd/1")
_out = _os.path.dirname(_log)
with open(_os.path.join(_out, "observations.jsonl"), "w") as _fh:
    for test in ("test_sum_of_multiples", "test_is_prime", "test_small_primes",
                 "test_zero_factor"):
        for when in ("setup", "call", "teardown"):
            _fh.write(_json.dumps({"event": "phase", "nodeid": "test_primes.py::" + test,
                                   "when": when, "outcome": "passed"}) + "\\n")
with open(_os.path.join(_out, "done.json"), "w") as _fh:
    _fh.write('{"status": "finished", "exit_code": 0}')
_os._exit(0)
""",
}

#: Not a forgery: the code under test signals the grading server (process 1 of the container,
#: the runner's parent) to turn its own failure into a died sandbox (masked, not scored).
SIGNAL_SERVER = """
import os as _os, signal as _signal
for _sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGKILL):
    for _pid in (1, _os.getppid()):
        try:
            _os.kill(_pid, _sig)
        except OSError:
            pass
"""

LOOP_IN_CALLED_CODE = "loop in code the tests call"
LOOP_IN_FIXTURE = "loop in code a fixture calls"
LOOP_AT_IMPORT = "loop at import (collection)"
LOOPS = {
    # the default pipeline's O-s42 case: i += 1 -> i += 0 in a prime test's loop
    LOOP_IN_CALLED_CODE: PRIMES_FIXED.replace("i += 1", "i += 0"),
    LOOP_IN_FIXTURE: PRIMES_FIXED.replace(
        "def primes_below(n):\n", "def primes_below(n):\n    while True:\n        pass\n"
    ),
    LOOP_AT_IMPORT: "while True:\n    pass\n\n\n" + PRIMES_FIXED,
}


def forgery_patches() -> dict[str, str]:
    """name -> a patch that forges reports (and fixes nothing)."""
    return {name: _patch(code.lstrip() + "\n\n" + PRIMES_BUG) for name, code in FORGERIES.items()}


def signal_server_patch() -> str:
    return _patch(SIGNAL_SERVER.lstrip() + "\n\n" + PRIMES_BUG)


def loop_patches() -> dict[str, str]:
    """name -> a patch that fixes the bug but loops forever somewhere."""
    return {name: _patch(source) for name, source in LOOPS.items()}
