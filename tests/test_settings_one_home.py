"""A config key's default and bounds live in config/schema.yaml alone (docs/design.md, "Settings,
one source"): no library module gives a key of the schema a default of its own by reading a
config mapping with ``.get(key, default)``, the sections a module holds on its own are the
settings tree's typed sections, filled and bounded by the schema, not classes with defaults, and
no settings record or function handed a key's value (the lists below) gives a field or
parameter named for a schema key a default of its own."""

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


#: The library's settings-like records other than the tree's sections: each is built from the
#: typed settings (or a job's record of them), so a field named for a schema key takes the
#: schema's value and never one of its own.
SETTINGS_RECORDS = [
    "editcredit.agent.bash_env:BashConfig",
    "editcredit.agent.rollout:RolloutConfig",
    "editcredit.evaluation.ledger:Limits",
    "editcredit.evaluation.runner:SliceSettings",
    "editcredit.policy.generator_factory:GenerationSettings",
    "editcredit.policy.sft:SFTConfig",
    "editcredit.rl.config:TrainConfig",
]

#: Library functions handed values of schema keys: a parameter named for a key has no default.
SETTINGS_FUNCTIONS = [
    "editcredit.agent.reward:terminal_reward",
    "editcredit.evaluation.journal:open_journal",
    "editcredit.rl.step_batch:assemble_step",
    "editcredit.agent.probe:rollout_and_grade",
    "editcredit.agent.probe:rollout_grade_and_query",
    "editcredit.suites.swebench_import:import_tasks",
    "editcredit.policy.fast_decode:FastGenerator",
    "editcredit.stopping.build:checkpoint_rows",
    "editcredit.stopping.build:checkpoints_job",
    "editcredit.report.paper:build_pdf",
    "editcredit.report.tables:render_tables",
    "editcredit.report.jobs:tables_job",
    "editcredit.evaluation.sandboxes:FaultySandbox",
    "editcredit.agent.minibugs_env:MinibugsEnv",
    "editcredit.sandbox.base:Sandbox",
    "editcredit.sandbox.docker_backend:DockerSandbox",
    "editcredit.sandbox.local_backend:LocalSandbox",
    "editcredit.sandbox.limits:per_test_limits",
    "editcredit.stats.bootstrap:seed_task_ci",
    "editcredit.stats.bootstrap:task_ci",
    "editcredit.stats.bootstrap:mean_ci",
    "editcredit.stats.bootstrap:stratified_ci",
    "editcredit.stats.paired:compare_arms",
    "editcredit.stats.encounter:encounter_effect",
    "editcredit.stats.learning:delta_ci",
]


def named(dotted: str) -> Any:
    """The object at ``module:name``."""
    import importlib

    module, name = dotted.split(":")
    return getattr(importlib.import_module(module), name)


def records() -> list[type]:
    """:data:`SETTINGS_RECORDS`, every section of the tree and every job's record."""
    from editcredit import job_settings, settings

    found = [named(dotted) for dotted in SETTINGS_RECORDS]
    for module in (settings, job_settings):
        found += [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type)
            and dataclasses.is_dataclass(obj)
            and obj.__module__ == module.__name__
        ]
    return found


def repeated_defaults(record: type, keys: set[str]) -> list[str]:
    """Fields of ``record`` named for a schema key that hold a default of their own (``None``
    for a key the schema neither requires nor fills is none)."""
    wrong = []
    for f in dataclasses.fields(record):
        if f.name not in keys or (f.default is None and f.default_factory is dataclasses.MISSING):
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory
            wrong.append(f"{record.__module__}.{record.__qualname__}.{f.name} = {default!r}")
    return wrong


def test_no_settings_record_repeats_a_schema_default():
    keys = schema_keys()
    found = records()
    assert len(found) > len(SETTINGS_RECORDS) + 40  # the tree's sections and the jobs' records
    wrong = [line for record in found for line in repeated_defaults(record, keys)]
    assert not wrong, "\n".join(wrong)


def test_no_settings_function_repeats_a_schema_default():
    keys = schema_keys()
    wrong = []
    for dotted in SETTINGS_FUNCTIONS:
        for name, param in inspect.signature(named(dotted)).parameters.items():
            if name in keys and param.default is not inspect.Parameter.empty:
                wrong.append(f"{dotted}({name}={param.default!r})")
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_a_repeated_default():
    @dataclasses.dataclass(frozen=True)
    class Budgets:
        max_turns: int = 30  # agent.max_turns: the schema's alone
        quarantine: dict[str, str] | None = None  # neither required nor filled: none
        extra: int = 0  # not a schema key

    assert [line.rsplit(".", 1)[1] for line in repeated_defaults(Budgets, schema_keys())] == [
        "max_turns = 30"
    ]
