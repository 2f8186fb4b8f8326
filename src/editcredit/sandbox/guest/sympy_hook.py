"""Observe SymPy's test runner (``bin/test``: ``sympy.testing.runtests``, before SymPy 1.6
``sympy.utilities.runtests``).

Standard library only (mounted into the sandbox; never imports editcredit). SymPy's
``SymPyTests`` runs every test function of every file and reports each outcome to its reporter
(``PyTestReporter``): ``entering_filename``, ``entering_test``, ``test_pass``, ``test_fail``,
``test_exception``, ``test_skip``, ``test_xfail``, ``test_xpass``, ``import_error``,
``leaving_filename``. :func:`install` adds an import hook that, when the module defining
``SymPyTests`` is executed, wraps ``SymPyTests.__init__`` so that the reporter it
is given is seen through a *tap* recording each of those calls before forwarding it, and wraps
``SymPyTests.test`` to run the grader's sentinel file once (with no keyword filter) after the
run's own files.

A test is named ``path::name``: its file relative to the work tree and its function's name,
as pytest names it (SymPy 1.13 and later run ``bin/test`` through pytest: :func:`bridge`);
SWE-bench's bare names are matched to the name part on the host. Outcomes become the
pytest observer's phase records: pass -> call passed; a failed assertion or an exception ->
call failed (SymPy counts both as failures); skip -> setup skipped; XFAIL -> call skipped with
``wasxfail``; XPASS -> call passed with ``wasxfail``. A file that cannot be imported is a
``collect_error`` (its tests are never observed). A test that raises ``SystemExit`` or ends the
process never reports: its item is incomplete. SymPy's ``test()`` runs in a subprocess only when
``PYTHONHASHSEED`` is unset; the grading environment sets it, so the tests run in this process.
"""

import importlib.abc
import os
import sys
import time

import machinery
import records

MODULES = ("sympy.testing.runtests", "sympy.utilities.runtests")


def relative(filename: str, root: str) -> str:
    """``filename`` relative to the work tree ``root``, with ``/`` (as it is when outside it)."""
    path = os.path.realpath(filename)
    base = os.path.realpath(root) if root else ""
    if base and path.startswith(base + os.sep):
        path = os.path.relpath(path, base)
    return path.replace(os.sep, "/")


def install(emit, sentinel_path: str = "", patched: "frozenset[str]" = frozenset(), root=""):
    """Arrange for SymPy's runner to be observed when it is imported; return the hook."""
    state = {"file": "", "test": None, "index": -1, "seen": set(), "sentinels": False}
    state["hooked"] = False
    guarded: dict = {}

    def check() -> "list[str]":
        found = machinery.changes(guarded, own) + machinery.tracing(patched)
        return records.tampering(emit, state["seen"], found)

    def start(f) -> None:
        finish_open()
        name = str(getattr(f, "__name__", f))
        if state["file"]:
            name = f"{relative(state['file'], root)}::{name}"
        state["index"] += 1
        state["test"] = (name, time.monotonic())
        emit({"event": "item_start", "index": state["index"], "nodeid": name})
        code = getattr(f, "__code__", None)
        filename = getattr(code, "co_filename", "") or ""
        if filename and os.path.realpath(filename) in patched:
            records.tampering(emit, state["seen"], [f"test item {name}: code from {filename}"])

    def outcome(when: str, result: str, message: str = "", **flags) -> None:
        cur = state["test"]
        if cur is None:
            return
        state["test"] = None
        name, began = cur
        duration = round(time.monotonic() - began, 6)
        emit(records.phase(name, "setup", "skipped" if when == "setup" else "passed", message))
        if when == "call":
            emit(records.phase(name, "call", result, message, duration=duration, **flags))
        emit(records.phase(name, "teardown", "passed"))
        emit({"event": "item_end", "index": state["index"], "nodeid": name})
        check()

    def finish_open() -> None:
        """A test entered but never reported (the runner went on without it): incomplete."""
        cur = state["test"]
        if cur is not None:
            state["test"] = None
            emit(records.phase(cur[0], "setup", "passed"))

    class Tap(records.Tap):
        """SymPy's reporter, with every per-test report recorded first."""

        __slots__ = ()

        def entering_filename(self, filename, *args, **kwargs):
            finish_open()
            state["file"] = str(filename)
            return self._inner.entering_filename(filename, *args, **kwargs)

        def leaving_filename(self, *args, **kwargs):
            finish_open()
            return self._inner.leaving_filename(*args, **kwargs)

        def entering_test(self, f, *args, **kwargs):
            start(f)
            return self._inner.entering_test(f, *args, **kwargs)

        def test_pass(self, *args, **kwargs):
            outcome("call", "passed")
            return self._inner.test_pass(*args, **kwargs)

        def test_fail(self, exc_info, *args, **kwargs):
            outcome("call", "failed", records.error_message(exc_info))
            return self._inner.test_fail(exc_info, *args, **kwargs)

        def test_exception(self, exc_info, *args, **kwargs):
            if state["test"] is None:  # the file itself raised while it was executed
                message = records.error_message(exc_info)
                emit({"event": "collect_error", "nodeid": state["file"], "message": message})
            outcome("call", "failed", records.error_message(exc_info))
            return self._inner.test_exception(exc_info, *args, **kwargs)

        def test_skip(self, v=None, *args, **kwargs):
            outcome("setup", "skipped", "" if v is None else str(v))
            return self._inner.test_skip(v, *args, **kwargs)

        def test_xfail(self, *args, **kwargs):
            outcome("call", "skipped", "XFAIL", wasxfail=True)
            return self._inner.test_xfail(*args, **kwargs)

        def test_xpass(self, v=None, *args, **kwargs):
            outcome("call", "passed", f"XPASS: {v}", wasxfail=True)
            return self._inner.test_xpass(v, *args, **kwargs)

        def import_error(self, filename, exc_info, *args, **kwargs):
            finish_open()
            state["file"] = str(filename)
            message = records.error_message(exc_info)
            emit({"event": "collect_error", "nodeid": str(filename), "message": message})
            return self._inner.import_error(filename, exc_info, *args, **kwargs)

    def patch_module(module) -> None:
        klass = module.__dict__.get("SymPyTests")
        if klass is None or state["hooked"] or klass.__module__ != module.__name__:
            return
        state["hooked"] = True
        init, test = klass.__init__, klass.test

        def __init__(self, reporter, *args, **kwargs):  # noqa: N807
            init(self, reporter if type(reporter) is Tap else Tap(reporter), *args, **kwargs)

        def run_test(self, *args, **kwargs):
            try:
                return test(self, *args, **kwargs)
            finally:
                if sentinel_path and not state["sentinels"]:
                    state["sentinels"] = True
                    saved = getattr(self, "_kw", ())
                    self._kw = ()
                    try:
                        self.test_file(sentinel_path)
                    finally:
                        self._kw = saved

        klass.__init__ = __init__
        klass.test = run_test
        name = module.__name__
        guarded.update(
            machinery.snapshot_of(
                [
                    (name, "SymPyTests"),
                    (name, "SymPyTests.__init__"),
                    (name, "SymPyTests.test"),
                    (name, "SymPyTests.test_file"),
                    ("json.encoder", "JSONEncoder.encode"),
                    ("json.encoder", "c_make_encoder"),
                    ("json.encoder", "encode_basestring_ascii"),
                    ("json.encoder", "encode_basestring"),
                ]
            )
        )
        own.update({f"sympy_hook:{f.__name__}": (f, f.__code__) for f in (__init__, run_test)})

    class Finder(importlib.abc.MetaPathFinder):
        """Wraps the loader of SymPy's runner module to patch it once it has run."""

        def find_spec(self, fullname, path, target=None):
            if fullname not in MODULES:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = Loader(spec.loader)
                    return spec
            return None

    class Loader(importlib.abc.Loader):
        def __init__(self, inner) -> None:
            self.inner = inner

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module) -> None:
            self.inner.exec_module(module)
            patch_module(module)

    sys.meta_path.insert(0, Finder())
    own = {
        f"sympy_hook:{fn.__name__}": (fn, fn.__code__)
        for fn in (
            check,
            start,
            outcome,
            finish_open,
            patch_module,
            emit,
            *(v for k, v in vars(Tap).items() if callable(v) and not k.startswith("__")),
        )
    }

    class Hook:
        def finish(self) -> bool:
            finish_open()
            return not (check() or state["seen"])

        def ran(self) -> bool:
            """Did SymPy's runner run (its sentinels with it)? If not, the session is not
            finished: nothing was observed to judge."""
            return state["sentinels"] or not sentinel_path

    return Hook()


def bridge(hook, observer, fd: int, req: dict, sentinel: "dict | None"):
    """Observe a SymPy whose ``bin/test`` runs pytest (``sympy.testing.runtests_pytest``, SymPy
    1.13 and later): the pytest observer is made now, before any of the task's code is
    imported (its snapshot of pytest's reporting machinery is taken here), and the first
    ``pytest.main`` the command calls runs with it and with the grader's sentinel module among
    its paths. The items are pytest's node ids (``path::name`` from the work tree, SymPy's
    ``--rootdir``). Return a hook that answers for both runners: the old one's
    (``SymPyTests``) or this one, whichever ran."""
    import pytest

    workspace = req["workspace"]
    plugin = observer.Observer(
        fd,
        req["nonce"],
        sentinel=(
            (os.path.join(workspace, sentinel["path"]), tuple(sentinel["names"]))
            if sentinel
            else None
        ),
        patched=tuple(os.path.join(workspace, p) for p in req.get("patched", [])),
    )
    real = pytest.main
    state = {"ran": False}
    sentinel_path = os.path.join(workspace, sentinel["path"]) if sentinel else ""

    def main(args=None, plugins=None):
        if state["ran"]:  # a nested or later run is the task's own business
            return real(args, plugins)
        state["ran"] = True
        args = list(sys.argv[1:] if args is None else args)
        extra = ["-p", "no:cacheprovider"]  # the tree is read-only
        if sentinel_path:
            extra.append(sentinel_path)
        return real([*args, *extra], plugins=[*(plugins or ()), plugin])

    pytest.main = main
    guarded = machinery.snapshot_of([("pytest", "main")], ("pytest",))

    emit = records.writer(fd, req["nonce"])
    seen: set = set()

    class Both:
        def finish(self) -> bool:
            old = hook.finish()
            # pytest.main replaced (the observer bypassed) is tampering whether or not it ran
            changed = records.tampering(emit, seen, machinery.changes(guarded))
            if not state["ran"]:
                return old and not changed
            return old and plugin.intact() and not changed

        def ran(self) -> bool:
            return state["ran"] or hook.ran()

    return Both()
