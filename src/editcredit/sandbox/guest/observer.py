"""Pytest plugin that records every collected item's phase outcomes as JSON lines.

Runs inside the sandbox with only the standard library and pytest. The grader never parses
terminal text: it reads the records this plugin writes (to a pipe the runner reads, or a file
outside the workspace). One line per event, each carrying the run's nonce:

- ``{"event": "session_start"}``
- ``{"event": "collect_error", "nodeid": ..., "message": ...}``
- ``{"event": "collected", "nodeids": [...]}`` (every item, before the runner's skip)
- ``{"event": "item_start", "index": i, "nodeid": ...}`` / ``{"event": "item_end", ...}``
- ``{"event": "phase", "nodeid": ..., "when": "setup"|"call"|"teardown", "outcome": ...,
  "wasxfail": bool, "xfail_not_run": bool, "xpass_strict": bool, "message": ...,
  "duration": s}``
- ``{"event": "tampering", "what": [...]}``: the reporting machinery changed (machinery.py)
- ``{"event": "session_finish", "exitstatus": int, "machinery": "intact"|"changed"}``

The test process also runs the patch's code, so the hooks are closures over their writer (no
attribute or global lookup a patch could swap), and every report is checked against the
machinery snapshot taken before any task code was imported.
"""

import json
import os

import machinery
import plugins
import pytest

MESSAGE_LIMIT = 2000
_encode = json.JSONEncoder(sort_keys=True).encode
_os_write = os.write
_type = type


class Observer:
    """Writes structured per-phase records for each test item.

    ``sink`` is a path (appended to) or a file descriptor. ``skip`` drops the first items of
    the collection (the runner's continuation after a per-test timeout). ``sentinel`` is the
    absolute path of the grader's sentinel module and its function names: they are collected
    whatever the task's ``python_functions`` says. ``patched`` are the absolute paths of the
    files the patch changed: hook implementations or test functions whose code comes from one
    of them are tampering. ``image_plugins``: register the ``pytest11`` plugins the image
    installs (:mod:`plugins`; the test process disables pytest's own autoload).
    """

    def __init__(
        self,
        sink,
        nonce: str,
        skip: int = 0,
        sentinel: "tuple[str, tuple[str, ...]] | None" = None,
        patched: "tuple[str, ...]" = (),
        image_plugins: bool = True,
    ) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        fd = sink if isinstance(sink, int) else os.open(sink, flags)
        guarded = machinery.snapshot()
        from _pytest.reports import TestReport

        state = {"index": skip - 1, "hooks": None, "seen": set(), "config": None, "items": {}}
        sentinel_file, sentinel_names = sentinel or ("", ())

        def emit(record: dict) -> None:
            record["nonce"] = nonce
            data = (_encode(record) + "\n").encode("utf-8", "replace")
            while data:
                data = data[_os_write(fd, data) :]

        def check(report=None) -> "list[str]":
            found = machinery.changes(guarded, own) + machinery.tracing(changed_files)
            if report is not None and _type(report) is not TestReport:
                found.append(f"report of type {_type(report).__name__}")
            if report is not None:
                for item, snap in state["items"].get(report.nodeid, ()):
                    found += machinery.item_changes(item, snap, changed_files)
            if state["config"] is not None:
                found += machinery.manager_changes(state["config"], guarded)
            if state["hooks"] is not None:
                found += machinery.hook_changes(state["hooks"], state["config"], changed_files)
            new = [f for f in found if f not in state["seen"]]
            if new:
                state["seen"].update(new)
                emit({"event": "tampering", "what": new})
            return found

        @pytest.hookimpl(hookwrapper=True)
        def pytest_cmdline_parse(pluginmanager, args):
            # before the command line is parsed: the plugins' options and ini keys are known,
            # and a -p no:NAME of the arguments or the configuration still unregisters one
            if image_plugins:
                plugins.register(pluginmanager, changed_files)
            yield

        def pytest_configure(config) -> None:
            config.option.maxfail = 0  # every test is observed (a task's -x would stop early)
            state["config"] = config
            # pytest's own plugins are registered by now, no task code imported yet
            state["hooks"] = machinery.hook_impls(config)

        def pytest_sessionstart(session) -> None:
            emit({"event": "session_start"})

        def pytest_collectreport(report) -> None:
            if report.failed:
                message = _message(report)
                emit({"event": "collect_error", "nodeid": report.nodeid, "message": message})

        @pytest.hookimpl(tryfirst=True)
        def pytest_pycollect_makeitem(collector, name, obj):
            path = str(getattr(collector, "path", getattr(collector, "fspath", "")))
            if sentinel_file and path == sentinel_file and name in sentinel_names:
                return pytest.Function.from_parent(collector, name=name)
            return None

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(session, config, items) -> None:
            emit({"event": "collected", "nodeids": [i.nodeid for i in items]})
            if skip:
                config.hook.pytest_deselected(items=items[:skip])
                items[:] = items[skip:]

        changed_files = frozenset(os.path.realpath(p) for p in patched)

        def pytest_collection_finish(session) -> None:
            foreign = machinery.foreign_hook_impls(session.config, changed_files)
            foreign += machinery.foreign_test_functions(session.items, changed_files)
            if foreign:
                state["seen"].update(foreign)
                emit({"event": "tampering", "what": foreign})
            for item in session.items:
                state["items"].setdefault(item.nodeid, []).append(
                    (item, machinery.item_identity(item))
                )
            check()

        def pytest_runtest_logstart(nodeid, location) -> None:
            state["index"] += 1
            emit({"event": "item_start", "index": state["index"], "nodeid": nodeid})

        def pytest_runtest_logreport(report) -> None:
            check(report)
            wasxfail = hasattr(report, "wasxfail")
            message = _message(report)
            emit(
                {
                    "event": "phase",
                    "nodeid": report.nodeid,
                    "when": report.when,
                    "outcome": report.outcome,
                    "wasxfail": wasxfail,
                    "xfail_not_run": wasxfail and "[NOTRUN]" in str(report.wasxfail),
                    "xpass_strict": report.failed and message.startswith("[XPASS(strict)]"),
                    "message": message,
                    "duration": float(getattr(report, "duration", 0.0) or 0.0),
                }
            )

        def pytest_runtest_logfinish(nodeid, location) -> None:
            emit({"event": "item_end", "index": state["index"], "nodeid": nodeid})

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(session, exitstatus) -> None:
            changed = check()
            emit(
                {
                    "event": "session_finish",
                    "exitstatus": int(exitstatus),
                    "machinery": "changed" if (changed or state["seen"]) else "intact",
                }
            )

        hooks = {
            f.__name__: f
            for f in (
                pytest_cmdline_parse,
                pytest_configure,
                pytest_sessionstart,
                pytest_collectreport,
                pytest_pycollect_makeitem,
                pytest_collection_modifyitems,
                pytest_collection_finish,
                pytest_runtest_logstart,
                pytest_runtest_logreport,
                pytest_runtest_logfinish,
                pytest_sessionfinish,
            )
        }
        own = {
            f"observer:{name}": (fn, fn.__code__)
            for name, fn in {**hooks, "emit": emit, "check": check, "_message": _message}.items()
        }
        for name, fn in hooks.items():
            setattr(self, name, fn)
        self.emit = emit
        self.intact = lambda: not (check() or state["seen"])


def _message(report) -> str:
    """The short crash message of a report (the structured reprcrash, not the terminal)."""
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return ""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)[:MESSAGE_LIMIT]
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])[:MESSAGE_LIMIT]
    return str(longrepr)[:MESSAGE_LIMIT]


def from_environment() -> Observer:
    """Build the observer from EDITCREDIT_OBS_PATH / EDITCREDIT_OBS_NONCE, removing both."""
    path = os.environ.pop("EDITCREDIT_OBS_PATH")
    nonce = os.environ.pop("EDITCREDIT_OBS_NONCE", "")
    return Observer(path, nonce)
