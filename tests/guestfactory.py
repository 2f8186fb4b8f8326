"""The guest's modules loaded for unit tests on the host, and stand-ins for pluggy's hook
callers and implementations (``machinery.hook_impls`` and ``hook_changes`` read only these
attributes)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from editcredit.sandbox.base import GUEST_DIR


def guest_module(name: str, alias: str = "") -> ModuleType:
    """A fresh copy of the guest module ``name`` (``GUEST_DIR/name.py``), under a name of its
    own (``guest_<name>`` or ``alias``), so its module-level caches are the test's."""
    spec = importlib.util.spec_from_file_location(
        alias or f"guest_{name}", GUEST_DIR / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeImpl:
    """A hook implementation: its plugin and function."""

    def __init__(self, plugin, function):
        self.plugin, self.function = plugin, function


class FakeCaller:
    """A hook caller: ``get_hookimpls()`` returns a copy of its implementations, as pluggy's."""

    def __init__(self, impls):
        self.impls = impls

    def get_hookimpls(self):
        return list(self.impls)
