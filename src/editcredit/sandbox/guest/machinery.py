"""Is pytest's reporting machinery still the one the observer started with?

Runs inside the test process, which also runs the patch's code, so the observer cannot simply
trust ``report.outcome``. It snapshots, before any task code is imported, the objects through
which an outcome travels from a test function to the observer's record: the report class and
its constructors, the runner's protocol functions, the function-call path, pluggy's hook
calling and the JSON encoder the observer uses (its raw write is captured at import). The
standard library in general is not guarded: tests legitimately monkeypatch it. After
collection it also snapshots every hook implementation on the reporting hooks and refuses
implementations whose code lives in the task's tree outside a ``conftest.py``.
:func:`changes` lists what differs.

Standard library and pytest only (mounted into the sandbox; never imports editcredit).
"""

from __future__ import annotations

import contextlib
import os
import sys

#: (module, attribute path) of every guarded object; a missing one (another pytest version)
#: is recorded as absent and must stay absent.
GUARDED = (
    ("_pytest.reports", "TestReport"),
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.reports", "TestReport.__init__"),
    ("_pytest.reports", "TestReport.__new__"),
    ("_pytest.reports", "TestReport.__setattr__"),
    ("_pytest.reports", "TestReport.__getattribute__"),
    ("_pytest.reports", "BaseReport.passed"),
    ("_pytest.reports", "BaseReport.failed"),
    ("_pytest.reports", "BaseReport.skipped"),
    ("_pytest.reports", "CollectReport"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "call_runtest_hook"),
    ("_pytest.runner", "pytest_runtest_protocol"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.runner", "pytest_runtest_call"),
    ("_pytest.runner", "pytest_runtest_setup"),
    ("_pytest.runner", "pytest_runtest_teardown"),
    ("_pytest.runner", "check_interactive_exception"),
    ("_pytest.runner", "CallInfo"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.runner", "SetupState.setup"),
    ("_pytest.runner", "SetupState.teardown_exact"),
    ("_pytest.skipping", "pytest_runtest_makereport"),
    ("_pytest.skipping", "pytest_runtest_call"),
    ("_pytest.skipping", "pytest_runtest_setup"),
    ("_pytest.python", "Function"),
    ("_pytest.python", "Function.runtest"),
    ("_pytest.python", "Function.setup"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.main", "pytest_runtestloop"),
    ("_pytest.main", "Session.gethookproxy"),
    ("_pytest.main", "FSHookProxy.__getattr__"),
    ("_pytest.nodes", "Node.ihook"),
    ("_pytest.outcomes", "fail"),
    ("_pytest.outcomes", "skip"),
    ("_pytest.outcomes", "Skipped"),
    ("_pytest.outcomes", "Failed"),
    ("pluggy._hooks", "HookCaller.__call__"),
    ("pluggy._hooks", "_HookCaller.__call__"),
    ("pluggy._hooks", "_SubsetHookCaller"),
    ("pluggy._manager", "PluginManager._hookexec"),
    ("pluggy._manager", "PluginManager.subset_hook_caller"),
    ("pluggy._callers", "_multicall"),
    ("pluggy._result", "_Result.get_result"),
    ("pluggy._result", "Result.get_result"),
    ("pluggy._result", "_Result.force_result"),
    ("pluggy._result", "Result.force_result"),
    ("json.encoder", "JSONEncoder.encode"),
    ("json.encoder", "JSONEncoder.iterencode"),
    ("json.encoder", "c_make_encoder"),
    ("json.encoder", "encode_basestring_ascii"),
    ("json.encoder", "encode_basestring"),
)

#: Hooks through which a report is made, logged or a test is called.
GUARDED_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_pyfunc_call",
    "pytest_runtestloop",
    "pytest_report_teststatus",
    "pytest_runtest_logstart",
    "pytest_runtest_logfinish",
    "pytest_sessionfinish",
)

_ABSENT = object()


def _resolve(module: str, path: str):
    """The raw object (class ``__dict__`` entry, not a bound or descriptor result)."""
    obj = sys.modules.get(module)
    if obj is None:
        return _ABSENT
    for name in path.split("."):
        space = getattr(obj, "__dict__", None)
        if isinstance(obj, type):
            for klass in obj.__mro__:
                if name in klass.__dict__:
                    obj = klass.__dict__[name]
                    break
            else:
                return _ABSENT
        elif space is not None and name in space:
            obj = space[name]
        else:
            return _ABSENT
    return obj


def _code_of(obj):
    func = getattr(obj, "__func__", obj)
    func = getattr(func, "fget", func)
    return getattr(func, "__code__", None)


def snapshot() -> dict:
    """Identities (and code objects) of every guarded object, before any task code runs."""
    import json.encoder  # noqa: F401 - guarded

    import _pytest.main  # noqa: F401
    import _pytest.nodes  # noqa: F401
    import _pytest.outcomes  # noqa: F401
    import _pytest.python  # noqa: F401
    import _pytest.reports  # noqa: F401
    import _pytest.runner  # noqa: F401
    import _pytest.skipping  # noqa: F401
    import pluggy  # noqa: F401

    for name in ("pluggy._hooks", "pluggy._manager", "pluggy._callers", "pluggy._result"):
        with contextlib.suppress(ImportError):
            __import__(name)
    out = {}
    for module, path in GUARDED:
        obj = _resolve(module, path)
        out[f"{module}:{path}"] = (obj, _code_of(obj))
    return out


def changes(before: dict, extra: dict | None = None) -> list[str]:
    """Guarded names whose object (or its code) is no longer the one snapshotted."""
    out = []
    for key, (obj, code) in before.items():
        module, path = key.split(":", 1)
        now = _resolve(module, path)
        if now is not obj or _code_of(now) is not code:
            out.append(key)
    for key, (obj, code) in (extra or {}).items():
        if _code_of(obj) is not code:
            out.append(key)
    return out


def hook_impls(config) -> dict:
    """For each guarded hook, the (plugin, function, code) of every implementation."""
    pm = config.pluginmanager
    out = {}
    for name in GUARDED_HOOKS:
        caller = getattr(pm.hook, name, None)
        impls = caller.get_hookimpls() if caller is not None else []
        out[name] = (
            caller,
            tuple((id(i.plugin), i.function, _code_of(i.function)) for i in impls),
        )
    return out


def hook_changes(before: dict, config) -> list[str]:
    now = hook_impls(config)
    out = []
    for name, (caller, impls) in before.items():
        cur_caller, cur_impls = now[name]
        if cur_caller is not caller:
            out.append(f"hook {name}: caller replaced")
        elif len(cur_impls) != len(impls) or any(
            a[0] != b[0] or a[1] is not b[1] or a[2] is not b[2]
            for a, b in zip(cur_impls, impls, strict=False)
        ):
            out.append(f"hook {name}: implementations changed")
    return out


def foreign_hook_impls(config, workspace: str) -> list[str]:
    """Reporting-hook implementations whose code lives in the task's tree outside a
    conftest.py (the patch's own files): a plugin registered by the code under test."""
    root = os.path.realpath(workspace) + os.sep
    out = []
    for name in GUARDED_HOOKS:
        caller = getattr(config.pluginmanager.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else []:
            code = _code_of(impl.function)
            filename = getattr(code, "co_filename", "") or ""
            real = os.path.realpath(filename) if os.path.isabs(filename) else ""
            if not real or (real.startswith(root) and os.path.basename(real) != "conftest.py"):
                out.append(f"hook {name}: implementation from {filename or '?'}")
    return out
