"""The machinery check's probes answer as the full check does, table-driven.

``machinery.changes`` and ``machinery.hook_changes`` keep, after a full check, the places it
read (:class:`_Probe`, :class:`_HookProbe`) and answer from them while every place holds the
same object. Each case below builds a small guarded world, runs the check twice (the second
answer comes from the probe), changes one thing, and requires the probed answer to be the
full check's, and to name the change; undone, both say nothing changed again.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest
from guestfactory import FakeCaller, FakeImpl, guest_module

machinery = guest_module("machinery", "guest_machinery_probes")
MOD = "editcredit_probe_world"


def _other():
    return 2


def _world() -> types.ModuleType:
    """A module of functions and classes of each kind the guarded names reach."""
    mod = types.ModuleType(MOD)

    def f():
        return 1

    class Base:
        def m(self):
            return 1

        @property
        def p(self):
            return 1

        @classmethod
        def c(cls):
            return 1

        @staticmethod
        def s():
            return 1

    class Child(Base):
        pass

    class Meta(type):
        pass

    class Node(metaclass=Meta):
        def run(self):
            return 1

    class Other:
        def m(self):
            return 2

    mod.f, mod.Base, mod.Child, mod.Node, mod.Meta, mod.Other = f, Base, Child, Node, Meta, Other
    return mod


GUARDED = (
    (MOD, "f"),
    (MOD, "Base.p"),
    (MOD, "Base.c"),
    (MOD, "Base.s"),
    (MOD, "Child"),
    (MOD, "Child.m"),
    (MOD, "Child.__setattr__"),  # object's slot wrapper, found along the MRO
    (MOD, "Node.run"),  # through a metaclass of Python code
    (MOD, "Missing.x"),  # absent, and must stay absent
)


def _meta_mro(mod):
    other = mod.Other

    def hook(cls, name):
        if name == "__mro__":
            return (other, object)
        return type.__getattribute__(cls, name)

    return hook


# (case, what to change: (module) -> undo, the key its change must name)
CHANGES = [
    ("module function replaced", lambda m: _set(m, "f", _other), f"{MOD}:f"),
    ("function code swapped", lambda m: _set(m.f, "__code__", _other.__code__), f"{MOD}:f"),
    ("method replaced in its class", lambda m: _set(m.Base, "m", _other), f"{MOD}:Child.m"),
    ("method shadowed earlier in the MRO", lambda m: _set(m.Child, "m", _other), f"{MOD}:Child.m"),
    (
        "property's getter code swapped",
        lambda m: _set(m.Base.__dict__["p"].fget, "__code__", _other.__code__),
        f"{MOD}:Base.p",
    ),
    (
        "classmethod's function code swapped",
        lambda m: _set(m.Base.__dict__["c"].__func__, "__code__", _other.__code__),
        f"{MOD}:Base.c",
    ),
    ("staticmethod replaced", lambda m: _set(m.Base, "s", staticmethod(_other)), f"{MOD}:Base.s"),
    ("class replaced", lambda m: _set(m, "Child", m.Other), f"{MOD}:Child"),
    ("bases reassigned", lambda m: _set(m.Child, "__bases__", (m.Other,)), f"{MOD}:Child.m"),
    (
        "slot wrapper shadowed",
        lambda m: _set(m.Base, "__setattr__", _other),
        f"{MOD}:Child.__setattr__",
    ),
    ("module replaced", lambda m: _set_module(_world()), f"{MOD}:f"),
    ("module removed", lambda m: _set_module(None), f"{MOD}:f"),
    (
        "absent name appears",
        lambda m: _set(m, "Missing", SimpleNamespace(x=1)),
        f"{MOD}:Missing.x",
    ),
    ("metaclass method replaced", lambda m: _set(m.Node, "run", _other), f"{MOD}:Node.run"),
    (
        "metaclass answers __mro__ itself",
        lambda m: _set(m.Meta, "__getattribute__", _meta_mro(m)),
        f"{MOD}:Node.run",
    ),
]

_MISSING = object()


def _set(obj, name, value):
    old = obj.__dict__.get(name, _MISSING) if name != "__bases__" else obj.__bases__
    if name == "__code__":
        old = obj.__code__
    setattr(obj, name, value)

    def undo():
        if old is _MISSING:
            delattr(obj, name)
        else:
            setattr(obj, name, old)

    return undo


def _set_module(value):
    old = sys.modules[MOD]
    if value is None:
        del sys.modules[MOD]
    else:
        sys.modules[MOD] = value

    def undo():
        sys.modules[MOD] = old

    return undo


@pytest.fixture
def world():
    mod = _world()
    sys.modules[MOD] = mod
    yield mod
    sys.modules.pop(MOD, None)


def _full(snap, extra=None):
    return machinery._changes(machinery._plan(snap), extra)


@pytest.mark.parametrize("case, change, key", CHANGES, ids=[c[0] for c in CHANGES])
def test_the_probe_answers_as_the_full_check(world, case, change, key):
    snap = machinery.snapshot_of(GUARDED)
    assert machinery.changes(snap) == [] == _full(snap)
    assert machinery.changes(snap) == []  # answered from the probe
    probe = machinery._PROBES[(id(snap), id(None))][2]
    assert probe.holds()
    undo = change(world)
    try:
        assert not probe.holds()
        found = machinery.changes(snap)
        assert found == _full(snap)
        assert key in found
    finally:
        undo()
    assert machinery.changes(snap) == [] == _full(snap)


def test_the_probe_covers_every_key_it_can_and_leaves_the_rest_to_the_full_check(world):
    world.odd = SimpleNamespace(x=1)  # an object of another kind on the path
    snap = machinery.snapshot_of((*GUARDED, (MOD, "odd.x")))
    machinery.changes(snap)
    probe = machinery._PROBES[(id(snap), id(None))][2]
    assert [entry[0] for entry in probe.slow] == [f"{MOD}:odd.x"]
    world.odd.x = 2
    assert machinery.changes(snap) == [f"{MOD}:odd.x"] == _full(snap)


def test_the_probe_checks_the_extra_entries(world):
    def own():
        return 1

    snap = machinery.snapshot_of(GUARDED)
    extra = {"observer:own": (own, own.__code__)}
    assert machinery.changes(snap, extra) == []
    assert machinery.changes(snap, extra) == []
    own.__code__ = _other.__code__
    assert machinery.changes(snap, extra) == ["observer:own"] == _full(snap, extra)


# -- the reporting hooks ------------------------------------------------------------------------


class _Plugin:
    def pytest_runtest_logreport(self, report):
        return None


def _hooks():
    plugin, module_plugin = _Plugin(), object()

    def impl(report):
        return None

    callers = {
        name: FakeCaller(
            [FakeImpl(module_plugin, impl), FakeImpl(plugin, plugin.pytest_runtest_logreport)]
        )
        for name in machinery.GUARDED_HOOKS
    }
    config = SimpleNamespace(pluginmanager=SimpleNamespace(hook=SimpleNamespace(**callers)))
    return config, callers, plugin


def _patched_function():
    namespace = {}
    exec(compile("def foreign(report):\n    return None\n", "/repo/patched.py", "exec"), namespace)
    return namespace["foreign"]


HOOK_CHANGES = [
    (
        "caller replaced",
        lambda c, cs, p: _set(c.pluginmanager.hook, "pytest_runtest_call", FakeCaller([])),
    ),
    ("implementation removed", lambda c, cs, p: _pop(cs["pytest_runtest_logreport"].impls)),
    (
        "implementation's function swapped",
        lambda c, cs, p: _set(cs["pytest_pyfunc_call"].impls[0], "function", _other),
    ),
    (
        "implementation's plugin swapped",
        lambda c, cs, p: _set(cs["pytest_pyfunc_call"].impls[0], "plugin", object()),
    ),
    (
        "function's code swapped",
        lambda c, cs, p: _set(
            cs["pytest_pyfunc_call"].impls[0].function, "__code__", _other.__code__
        ),
    ),
    (
        "method's function code swapped",
        lambda c, cs, p: _set(
            type(p).__dict__["pytest_runtest_logreport"], "__code__", _other.__code__
        ),
    ),
    (
        "method's function given a getter",
        lambda c, cs, p: _set(type(p).__dict__["pytest_runtest_logreport"], "fget", _other),
    ),
    (
        "implementation added from a changed file",
        lambda c, cs, p: _push(
            cs["pytest_runtest_makereport"].impls, FakeImpl(object(), _patched_function())
        ),
    ),
]


def _pop(impls):
    last = impls.pop()
    return lambda: impls.append(last)


def _push(impls, impl):
    impls.append(impl)
    return impls.pop


@pytest.mark.parametrize("case, change", HOOK_CHANGES, ids=[c[0] for c in HOOK_CHANGES])
def test_the_hook_probe_answers_as_the_full_check(case, change):
    config, callers, plugin = _hooks()
    patched = frozenset({"/repo/patched.py"})
    before = machinery.hook_impls(config)
    hook = config.pluginmanager.hook
    assert machinery.hook_changes(before, config, patched) == []
    assert machinery.hook_changes(before, config, patched) == []  # from the probe
    undo = change(config, callers, plugin)
    try:
        found = machinery.hook_changes(before, config, patched)
        assert found == machinery._hook_changes(before, hook, patched)
        assert found
        assert machinery.hook_changes(before, config, patched) == found  # probed again
    finally:
        undo()
    assert machinery.hook_changes(before, config, patched) == []
