"""A config key's default and bounds live in config/schema.yaml alone (docs/design.md, "Settings,
one source"): no library module gives a key of the schema a default of its own by reading a
config mapping with ``.get(key, default)``, and the sections a module holds on its own are the
settings tree's typed sections, filled and bounded by the schema, not classes with defaults."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "editcredit"

#: A receiver that names a config mapping: ``cfg``, ``config``, ``sandbox_cfg``, ``x.agent_cfg``.
CONFIG_MAPPING = re.compile(r"(^|_)(cfg|config)$")


def schema_keys() -> set[str]:
    """Every key name the schema declares, at any depth."""
    keys: set[str] = set()

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        for name, sub in (node.get("properties") or {}).items():
            keys.add(name)
            walk(sub)
        for name in ("additionalProperties", "items"):
            walk(node.get(name))
        for sub in (node.get("$defs") or {}).values():
            walk(sub)

    walk(yaml.safe_load((REPO / "config" / "schema.yaml").read_text()))
    return keys


def receiver(node: ast.expr) -> str:
    """The name a ``.get`` is called on (``(cfg or {})`` and ``cfg["x"]`` read as ``cfg``)."""
    if isinstance(node, ast.BoolOp):
        return receiver(node.values[0])
    if isinstance(node, ast.Subscript):
        return receiver(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def defaulted_reads(path: Path, keys: set[str]) -> set[str]:
    """The schema keys ``path`` reads from a config mapping with a default of its own."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "get" or len(node.args) != 2:
            continue
        key, mapping = node.args[0], receiver(node.func.value)
        if isinstance(key, ast.Constant) and key.value in keys and CONFIG_MAPPING.search(mapping):
            found.add(str(key.value))
    return found


def test_no_library_module_gives_a_schema_key_a_default_of_its_own():
    keys = schema_keys()
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("sandbox/guest/") or "minibugs/pool" in rel:
            continue
        found = defaulted_reads(path, keys)
        wrong += [f"{rel}: .get({k!r}, <default>) on a config mapping" for k in sorted(found)]
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_a_defaulted_read(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(sandbox_cfg, cfg):\n    return cfg.get('kind', 'oracle')\n")
    assert defaulted_reads(module, schema_keys()) == {"kind"}
    module.write_text("def f(state):\n    return state.get('health', {})\n")  # not a config
    assert defaulted_reads(module, schema_keys()) == set()


def test_sections_held_on_their_own_are_the_typed_sections():
    from editcredit.policy.generator_factory import FastSettings
    from editcredit.policy.vllm_backend import VLLMSettings
    from editcredit.sandbox.limits import LimitSettings
    from editcredit.settings import FastBackendSettings, TestLimits, VLLMBackendSettings

    assert LimitSettings is TestLimits
    assert VLLMSettings is VLLMBackendSettings
    assert FastSettings is FastBackendSettings
    for section in (TestLimits, VLLMBackendSettings, FastBackendSettings):
        defaults = [f.name for f in dataclasses.fields(section)]
        assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(section)), defaults


def test_rollout_workers_take_their_placement_from_the_settings():
    from editcredit.rl.workers import RayWorkers

    params = inspect.signature(RayWorkers.__init__).parameters
    for name in ("address", "gpus_per_worker"):
        assert params[name].default is inspect.Parameter.empty, name
