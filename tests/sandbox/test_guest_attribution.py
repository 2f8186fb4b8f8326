"""The guest's pure parts, table-driven: which wrappers of a test are the repository's own
(``machinery.wrapper_of``), SymPy ids with and without their path (``runners``), which guest
module names a tree takes back, and which image plugins a patch cannot add."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from guestfactory import FakeCaller, FakeImpl, guest_module

from editcredit.data.task import Task
from editcredit.sandbox.base import GUEST_DIR
from editcredit.sandbox.runners import id_labels, matches, sympy_parts

machinery = guest_module("machinery")
HERE = os.path.realpath(__file__)


def target():
    return 1


class Case:
    def test_x(self):
        return 1


def _wraps(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)

    return wrapper


def _closure(fn):
    def call(*a, **k):
        return fn(*a, **k)

    return call


class Holder:  # as asgiref's AsyncToSync: the method kept in an attribute
    def __init__(self, awaitable):
        self.awaitable = awaitable

    def __call__(self, *a, **k):
        return self.awaitable(*a, **k)


def _deep(fn, n):
    for _ in range(n):
        fn = _closure(fn)
    return fn


NONE: frozenset[str] = frozenset()
THIS = frozenset({HERE})
WRAPPERS = [
    # (what is installed, the test's function, files the patch changed, accepted)
    ("the function itself", target, target, NONE, True),
    ("a bound method of it", Case().test_x, Case.test_x, NONE, True),
    ("functools.wraps wrapper", _wraps(target), target, NONE, True),
    ("bare closure", _closure(target), target, NONE, True),
    ("closure of a wraps wrapper", _closure(_wraps(target)), target, NONE, True),
    ("callable object holding the method", Holder(Case().test_x), Case.test_x, NONE, True),
    ("wrapper from a changed file", _wraps(target), target, THIS, False),
    ("another function", _closure(print), target, NONE, False),
    (
        "contextlib.contextmanager (never runs it)",
        contextlib.contextmanager(target),
        target,
        NONE,
        False,
    ),
    ("functools.partial (no Python code)", functools.partial(target), target, NONE, False),
    ("a lambda compiled at run time", eval("lambda: target()"), target, NONE, False),
    ("wrapped too deep", _deep(target, machinery.WRAP_DEPTH + 1), target, NONE, False),
]


@pytest.mark.parametrize(
    ("installed", "func", "patched", "accepted"),
    [w[1:] for w in WRAPPERS],
    ids=[w[0] for w in WRAPPERS],
)
def test_wrapper_of_accepts_only_unchanged_code(installed, func, patched, accepted):
    assert machinery.wrapper_of(installed, func, patched) is accepted


class _Item:
    nodeid = "t.py::test_x"

    def __init__(self, obj, parent=None):
        self._obj = obj
        self.parent = parent
        self.originalname = "target"


class _Module:  # pytest's Module node: the module in ``_obj``
    def __init__(self, module):
        self._obj = module


def test_a_cleared_test_function_is_not_a_changed_item():
    item = _Item(target)
    snap = machinery.item_identity(item)
    item._obj = None  # pytest's TestCaseFunction.teardown
    assert machinery.item_changes(item, snap, NONE) == []
    item._obj = _wraps(target)
    assert machinery.item_changes(item, snap, NONE) == []
    assert machinery.item_changes(item, snap, THIS)  # the wrapper's file was patched
    item._obj = lambda: None
    assert machinery.item_changes(item, snap, NONE)
    item._obj = target
    saved, target.__code__ = target.__code__, (lambda: 2).__code__
    try:
        assert machinery.item_changes(item, snap, NONE) == ["test item t.py::test_x: code replaced"]
    finally:
        target.__code__ = saved


SYMPY_IDS = [
    # (expected id, observed item, the same test)
    ("test_flatten", "sympy/a/tests/test_x.py::test_flatten", True),
    ("test_flatten", "sympy/b/tests/test_y.py::test_flatten", True),
    ("sympy/a/tests/test_x.py::test_flatten", "sympy/a/tests/test_x.py::test_flatten", True),
    ("sympy/a/tests/test_x.py::test_flatten", "sympy/b/tests/test_y.py::test_flatten", False),
    ("./sympy/a/tests/test_x.py::test_flatten", "sympy/a/tests/test_x.py::test_flatten", True),
    ("sympy/a/tests/test_x.py::test_flatten", "test_flatten", False),
    ("test_flatten", "test_flatten", True),
    ("test_flatten", "sympy/a/tests/test_x.py::test_flatten2", False),
]


@pytest.mark.parametrize(("expected", "nodeid", "same"), SYMPY_IDS)
def test_a_sympy_id_with_a_path_never_matches_another_files_test(expected, nodeid, same):
    assert matches("sympy", expected, nodeid) is same


def test_sympy_parts_and_labels_keep_the_path():
    assert sympy_parts("sympy/a/test_x.py::test_f") == ("sympy/a/test_x.py", "test_f")
    assert sympy_parts("test_f") == ("", "test_f")
    task = Task(
        instance_id="s",
        repo="sympy/sympy",
        problem_statement="p",
        patch="x",
        FAIL_TO_PASS=["test_f"],
        PASS_TO_PASS=[],
        test_paths=["sympy/a/test_x.py", "sympy/b/test_y.py"],
        files={"sympy/a/test_x.py": "", "sympy/b/test_y.py": ""},
        suite="s",
        test_runner="sympy",
    )
    assert id_labels(task, ["sympy/b/test_y.py::test_f"]) == ["sympy/b/test_y.py", "-k", "test_f"]
    assert id_labels(task, ["test_f", "sympy/b/test_y.py::test_g"]) == [
        "sympy/a/test_x.py",
        "sympy/b/test_y.py",
        "-k",
        "test_f",
        "test_g",
    ]


def _in_guest(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter that imported the guest runner (as the sandbox
    does); its last line of output, as JSON."""
    prelude = f"import sys, json\nsys.argv = [''] + {list(args)!r}\n"
    prelude += f"sys.path.insert(0, {str(GUEST_DIR)!r})\nimport runner\n"
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_guest_module_names_the_tree_has_are_released(tmp_path):
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "records.py").write_text("X = 1\n")
    (tree / "tests" / "commands").mkdir(parents=True)
    out = _in_guest(
        "released = runner.hide_guest_modules(sys.argv[1])\n"
        "left = sorted(n for n in runner.GUEST_MODULES if n in sys.modules)\n"
        "print(json.dumps({'released': released, 'left': left}))\n",
        str(tree),
    )
    assert out["released"] == ["commands", "records"]
    assert "commands" not in out["left"] and "records" not in out["left"]
    assert {"machinery", "sympy_hook", "unittest_hook"} <= set(out["left"])


def test_a_plugin_whose_metadata_the_patch_touched_is_not_loaded(tmp_path):
    for name in ("kept", "added"):
        info = tmp_path / f"{name}_plugin-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 1\n")
        (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}_plugin\n")
    patched = [str(Path(tmp_path, "added_plugin-1.0.dist-info", "entry_points.txt").resolve())]
    out = _in_guest(
        "import plugins\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "names = [n for n, _ in plugins.entry_points(frozenset(json.loads(sys.argv[2])))]\n"
        "print(json.dumps({'names': names}))\n",
        str(tmp_path),
        json.dumps(patched),
    )
    assert "kept" in out["names"] and "added" not in out["names"]


def test_a_cleared_function_is_resolved_from_its_module():
    module = types.ModuleType("t")
    module.target = target
    item = _Item(target, _Module(module))
    snap = machinery.item_identity(item)
    item._obj = None
    assert machinery.item_changes(item, snap, NONE) == []
    module.target = lambda: None  # what pytest would call next
    assert machinery.item_changes(item, snap, NONE) == [
        "test item t.py::test_x: its module's function replaced"
    ]
    module.target = _wraps(target)  # a wrapper of unchanged code: the test still runs
    assert machinery.item_changes(item, snap, NONE) == []


def test_a_plugin_module_the_patch_wrote_is_not_registered(tmp_path):
    info = tmp_path / "shadow_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow-plugin\nVersion: 1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nshadow = shadow_plugin\n")
    (tmp_path / "shadow_plugin.py").write_text("X = 1\n")
    out = _in_guest(
        "import plugins\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "class PM:\n"
        "    def __init__(self): self.got = []\n"
        "    def is_blocked(self, name): return False\n"
        "    def get_plugin(self, name): return None\n"
        "    def register(self, plugin, name): self.got.append(name)\n"
        "result = {}\n"
        "for patched in ([], [sys.argv[2]]):\n"
        "    sys.modules.pop('shadow_plugin', None)\n"
        "    pm = PM()\n"
        "    plugins.register(pm, frozenset(patched))\n"
        "    result[str(len(patched))] = [n for n in pm.got if n == 'shadow']\n"
        "print(json.dumps(result))\n",
        str(tmp_path),
        str((tmp_path / "shadow_plugin.py").resolve()),
    )
    assert out == {"0": ["shadow"], "1": []}


def test_the_warm_servers_plugin_search_still_leaves_out_what_the_patch_touched(tmp_path):
    for name in ("kept", "added"):
        info = tmp_path / f"{name}_plugin-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 1\n")
        (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}_plugin\n")
    patched = [str(Path(tmp_path, "added_plugin-1.0.dist-info", "entry_points.txt").resolve())]
    out = _in_guest(
        "import plugins\n"
        "path = [sys.argv[1], *sys.path]\n"
        "plugins.prewarm(path)\n"  # the server, before it forks
        "sys.path[:] = path\n"  # the test process's path
        "names = lambda p: [n for n, _ in plugins.entry_points(frozenset(p))]\n"
        "print(json.dumps({'clean': names([]), 'patched': names(json.loads(sys.argv[2])),\n"
        "                  'found_once': len(plugins._FOUND)}))\n",
        str(tmp_path),
        json.dumps(patched),
    )
    assert {"kept", "added"} <= set(out["clean"])
    assert "kept" in out["patched"] and "added" not in out["patched"]
    assert out["found_once"] == 1


def _late():
    return 2


def test_a_late_hook_implementation_is_judged_once_and_again_when_it_changes():
    plugin, late_plugin = object(), object()
    caller = FakeCaller([FakeImpl(plugin, target)])
    config = types.SimpleNamespace(
        pluginmanager=types.SimpleNamespace(
            hook=types.SimpleNamespace(pytest_runtest_logreport=caller)
        )
    )
    snap = machinery.hook_impls(config)
    caller.impls.append(FakeImpl(late_plugin, _late))  # registered after the snapshot
    assert machinery.hook_changes(snap, config, NONE) == []
    assert machinery.hook_changes(snap, config, NONE) == []  # the judged implementations
    namespace: dict = {}
    exec("def forged():\n    return 3\n", namespace)  # code from no file
    caller.impls[1].function = namespace["forged"]
    assert machinery.hook_changes(snap, config, NONE) == [
        "hook pytest_runtest_logreport: implementation from <string>"
    ]
    caller.impls[1].function = _late
    assert machinery.hook_changes(snap, config, NONE) == []
    caller.impls[0].function = _late  # the snapshot's implementation swapped
    assert machinery.hook_changes(snap, config, NONE) == [
        "hook pytest_runtest_logreport: implementation removed or swapped"
    ]
    caller.impls[0].function = target
    target.__code__, saved = _late.__code__, target.__code__
    try:  # its code swapped
        assert machinery.hook_changes(snap, config, NONE) == [
            "hook pytest_runtest_logreport: implementation removed or swapped"
        ]
    finally:
        target.__code__ = saved
    assert machinery.hook_changes(snap, config, NONE) == []


def test_the_guarded_names_are_resolved_as_before():
    snap = machinery.snapshot()
    assert machinery.changes(snap) == []
    import _pytest.runner

    saved = _pytest.runner.call_and_report
    _pytest.runner.call_and_report = lambda *a, **k: None
    try:
        assert machinery.changes(snap) == ["_pytest.runner:call_and_report"]
        assert [
            k for k, (o, _) in snap.items() if machinery._resolve(*k.split(":", 1)) is not o
        ] == ["_pytest.runner:call_and_report"]
    finally:
        _pytest.runner.call_and_report = saved
    assert machinery.changes(snap) == []
