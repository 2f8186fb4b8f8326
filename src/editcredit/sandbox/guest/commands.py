"""Run a task's own test command (not pytest) in the forked grading child, observed.

Standard library only (mounted into the sandbox; never imports editcredit). The command is a
Python program given as an argument vector, run in this process (the observer's pipe and the
nonce never reach the environment or another process):

- ``python3 -m MODULE ARGS`` (``python``, ``python3.X`` too; ``-W``, ``-u``, ``-B``, ``-b``,
  ``-s``, ``-E`` accepted before ``-m``): ``runpy.run_module`` as ``__main__``;
- ``[python3] SCRIPT ARGS`` (``./tests/runtests.py``, ``bin/test``): ``runpy.run_path`` of the
  script, relative to the work tree, as ``__main__`` with its directory first on ``sys.path``.

The runner's hook (:mod:`unittest_hook` for ``unittest`` and ``django``, :mod:`sympy_hook` for
``sympy``) is installed first. The records: ``session_start``, the hook's items, and after the
program returns (or raises ``SystemExit``) ``session_finish`` with the machinery status; the
grading runner adds ``main_returned``.
"""

import os
import re
import runpy
import sys
import traceback
import warnings

import records
import sympy_hook
import unittest_hook

FLAGS_IGNORED = frozenset({"-u", "-B", "-b", "-bb", "-s", "-E", "-q"})
_PAREN = re.compile(r"^(?P<name>[^\s()]+) \((?P<where>[^()]+)\)$")


class CommandError(ValueError):
    """The test command is not a Python program this runner can start."""


def parse(argv: "list[str]") -> "tuple[str, str, list[str], list[str]]":
    """(kind 'module' | 'script', target, its arguments, warning options) of a command."""
    if not argv:
        raise CommandError("empty test command")
    args, warn = list(argv), []
    if os.path.basename(args[0]).startswith("python"):
        args.pop(0)
        while args and args[0].startswith("-") and args[0] != "-":
            opt = args.pop(0)
            if opt == "-m":
                if not args:
                    raise CommandError(f"-m without a module: {argv}")
                return "module", args[0], args[1:], warn
            if opt == "-W":
                warn.append(args.pop(0) if args else "")
            elif opt.startswith("-W"):
                warn.append(opt[2:])
            elif opt not in FLAGS_IGNORED:
                raise CommandError(f"unsupported interpreter option {opt!r} in {argv}")
        if not args:
            raise CommandError(f"no script in the test command {argv}")
    return "script", args[0], args[1:], warn


def execute(argv: "list[str]", workspace: str) -> int:
    """Run the command in this process; its exit status (1 for an uncaught exception)."""
    kind, target, rest, warn = parse(argv)
    for option in warn:
        sys.warnoptions.append(option)
    if warn:
        warnings._processoptions(warn)  # noqa: SLF001 - as the interpreter's own -W does
    try:
        if kind == "module":
            sys.argv = [target, *rest]
            sys.path.insert(0, workspace)
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            path = os.path.join(workspace, target)
            if not os.path.isfile(path):
                raise CommandError(f"test command's script {target!r} is not a file in the tree")
            sys.argv = [target, *rest]
            sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
            runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except CommandError:
        raise
    except BaseException:  # noqa: BLE001 - the program's own crash is its exit status
        traceback.print_exc()
        return 1
    return 0


def rerun_command(req: dict, timeout: dict) -> "list[str]":
    """The command that runs only the test that timed out: the request's ``rerun`` prefix
    with a label naming it (unittest: ``module.Class.test``; SymPy: the test files with
    ``-k`` and its name)."""
    rerun = req["rerun"]
    nodeid = str(timeout["nodeid"])
    if req["runner"] == "sympy":  # ids are path::name: SymPy's -k takes the name
        return [*rerun["prefix"], *rerun["paths"], "-k", nodeid.rsplit("::", 1)[-1]]
    match = _PAREN.match(nodeid)
    return [*rerun["prefix"], f"{match['where']}.{match['name']}" if match else nodeid]


def run(req: dict, fd: int, observer=None) -> int:
    """Install the runner's hook, run the command, write the session records. ``observer`` is
    the pytest observer's module where the image has pytest (SymPy 1.13 and later run their
    tests with pytest from ``bin/test``: :func:`sympy_hook.bridge`)."""
    emit = records.writer(fd, req["nonce"])
    workspace = req["workspace"]
    runner = req["runner"]
    sentinel = req.get("sentinel")
    sentinel_path = os.path.join(workspace, sentinel["path"]) if sentinel else ""
    patched = frozenset(os.path.realpath(os.path.join(workspace, p)) for p in req["patched"])
    emit({"event": "session_start", "runner": runner})
    # the runner's own collection is not observed apart from its tests: per-test limits only
    emit({"event": "collected", "nodeids": []})
    if runner in ("unittest", "django"):
        hook = unittest_hook.install(emit, sentinel_path, patched)
    elif runner == "sympy":
        hook = sympy_hook.install(emit, sentinel_path, patched, root=workspace)
        if observer is not None:
            hook = sympy_hook.bridge(hook, observer, fd, req, sentinel)
    else:
        emit({"event": "collect_error", "nodeid": "", "message": f"unknown runner {runner!r}"})
        return 4
    try:
        code = execute(list(req["command"]), workspace)
    except CommandError as exc:
        emit({"event": "collect_error", "nodeid": "", "message": str(exc)})
        code = 4
    sys.stdout.flush()
    sys.stderr.flush()
    intact = hook.finish()
    if not hook.ran():
        message = f"the {runner} runner never ran its tests"
        emit({"event": "collect_error", "nodeid": "", "message": message})
        return code
    emit(
        {
            "event": "session_finish",
            "exitstatus": int(code),
            "machinery": "intact" if intact else "changed",
        }
    )
    return code
