"""The configuration: every schema key documented, unknown keys refused with their path, and one
typed tree (editcredit.settings) built from the validated config of every preset."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from editcredit.config import ConfigError, validate_config
from editcredit.rl.config import TrainConfig, run_config
from editcredit.settings import RUN_FIELDS, GrpoSettings, Settings

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
PRESETS = sorted((REPO / "config" / "presets").glob("*.yaml"))


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """A subschema with its local ``$ref`` (``#/$defs/...``) merged in."""
    ref = schema.get("$ref")
    if not ref:
        return schema
    target = SCHEMA
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}


def undocumented_keys(schema: dict[str, Any], path: str = "") -> list[str]:
    """Paths of schema properties without a description (``<name>`` for free-form keys)."""
    schema = resolved(schema)
    missing = []
    for key, sub in schema.get("properties", {}).items():
        where = f"{path}.{key}" if path else key
        if "description" not in sub:
            missing.append(where)
        missing.extend(undocumented_keys(sub, where))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        missing.extend(undocumented_keys(extra, f"{path}.<name>"))
    return missing


def open_objects(schema: dict[str, Any], path: str = "") -> list[str]:
    """Paths of objects with named properties that would accept an unknown key."""
    schema = resolved(schema)
    found = []
    if "properties" in schema and schema.get("additionalProperties") is not False:
        found.append(path or "(top level)")
    for key, sub in schema.get("properties", {}).items():
        found.extend(open_objects(sub, f"{path}.{key}" if path else key))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        found.extend(open_objects(extra, f"{path}.<name>"))
    return found


def merged(*layers: dict[str, Any]) -> dict[str, Any]:
    """Config layers merged as Snakemake merges --configfile (nested mappings key by key)."""
    out: dict[str, Any] = {}
    for layer in layers:
        _merge(out, copy.deepcopy(layer))
    return out


def _merge(into: dict[str, Any], layer: dict[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def default_config() -> dict[str, Any]:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_every_schema_key_is_documented():
    assert undocumented_keys(SCHEMA) == []


def empty_entries(node: Any, path: str = "") -> list[str]:
    """Paths of mapping entries whose value is null: in a schema, a flow mapping whose unquoted
    description holds a comma leaves the text after it as a stray key of this kind."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else str(key)
            found += [where] if value is None else empty_entries(value, where)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += empty_entries(value, f"{path}[{i}]")
    return found


def test_no_schema_text_is_cut_into_a_stray_key():
    assert empty_entries(SCHEMA) == []
    cut = yaml.safe_load("x: {type: string, description: For 'a', the rest.}")
    assert empty_entries(cut) == ["x.the rest."]


def test_a_planted_undocumented_key_is_found():
    schema = copy.deepcopy(SCHEMA)
    schema["properties"]["training"]["properties"]["grpo"]["properties"]["new_knob"] = {
        "type": "number"
    }
    schema["properties"]["models"]["additionalProperties"]["properties"]["extra"] = {}
    assert undocumented_keys(schema) == ["models.<name>.extra", "training.grpo.new_knob"]


def test_every_object_refuses_unknown_keys():
    assert open_objects(SCHEMA) == []


def test_the_grpo_keys_are_the_train_config_fields():
    """training.grpo lists exactly TrainConfig's fields (less the run's): one must follow the
    other when a field is added."""
    grpo = SCHEMA["properties"]["training"]["properties"]["grpo"]["properties"]
    fields = {f.name for f in dataclasses.fields(TrainConfig)} - set(RUN_FIELDS)
    assert set(grpo) == fields
    assert set(default_config()["training"]["grpo"]) == fields


def test_the_policy_loss_names_are_the_registered_losses():
    """training.grpo.policy_loss's enum lists exactly rl.losses' registered policy losses: the
    tree checks a config's name against the schema (settings imports nothing of rl)."""
    from editcredit.rl.losses import POLICY_LOSSES

    grpo = SCHEMA["properties"]["training"]["properties"]["grpo"]["properties"]
    assert grpo["policy_loss"]["enum"] == sorted(POLICY_LOSSES)


def test_training_grpo_is_typed_and_one_builder_makes_a_run_config():
    """training.grpo is a typed section (readable as the mapping it was); a run's TrainConfig is
    it with the run's temperature, arm and seed, put together by rl.config.run_config alone."""
    config = validate_config(default_config())
    grpo = Settings.from_config(config).training.grpo
    assert isinstance(grpo, GrpoSettings)
    assert grpo == config["training"]["grpo"] and dict(grpo) == config["training"]["grpo"]
    assert grpo.group_size == grpo["group_size"] == config["training"]["grpo"]["group_size"]
    run = run_config(grpo, 0.7, "M", 3)
    assert run == run_config(Settings.from_config(config).training.grpo, 0.7, "M", 3)
    assert run == run_config(config["training"]["grpo"], 0.7, "M", 3)
    assert (run.temperature, run.arm, run.seed) == (0.7, "M", 3)
    assert {key: getattr(run, key) for key in grpo} == dict(grpo)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("micro_batch_tokens", -1, "must be >= 0"),
        ("ppo_clip", 0.0, "must be > 0"),
        ("query_rate", 1.5, r"must be in \[0, 1\]"),
        ("loss_aggregation", "mean", "'mean' is not one of prompt_mean, token_mean, sequence_mean"),
    ],
)
def test_a_run_config_keeps_the_bounds_the_schema_declares(key, value, message):
    grpo = {**validate_config(default_config())["training"]["grpo"], key: value}
    with pytest.raises(ValueError, match=f"TrainConfig.{key}: {message}"):
        run_config(grpo, 1.0, "O", 0)
    with pytest.raises(ValueError, match=r"TrainConfig.temperature: must be > 0"):
        run_config(validate_config(default_config())["training"]["grpo"], 0.0, "O", 0)


@pytest.mark.parametrize("preset", [None, *PRESETS], ids=lambda p: p.name if p else "default")
def test_every_preset_builds_the_typed_tree(preset):
    layers = [default_config()]
    if preset is not None:
        layers.append(yaml.safe_load(preset.read_text()))
    config = validate_config(merged(*layers))
    settings = Settings.from_config(config)
    assert settings.to_dict() == config
    assert settings.training.plan == config["training"]["plan"]
    run = run_config(settings.training.grpo, settings.agent.temperature, "M", 42)
    assert run.credit_lambda == config["training"]["grpo"]["credit_lambda"]


@pytest.mark.parametrize(
    "layer, message",
    [
        ({"training": {"grpo": {"credit_lamda": 0.1}}}, "unknown key training.grpo.credit_lamda"),
        ({"training": {"health": {"streak": 3}}}, "unknown key training.health.streak"),
        ({"models": {"tiny": {"sft": {"lr_warm": 1}}}}, "unknown key models.tiny.sft.lr_warm"),
        ({"stats": {"bootstrap": {"n_resamples": 1.5}}}, "field stats.bootstrap.n_resamples"),
        ({"sandbox": {"docker_mode": "tepid"}}, "field sandbox.docker_mode"),
    ],
)
def test_a_bad_key_is_refused_naming_its_path(layer, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        validate_config(merged(default_config(), layer))


def _with_extra_entries() -> dict[str, Any]:
    """The default plus a second suite and model (copies of the default's)."""
    config = default_config()
    config["suites"]["extra"] = copy.deepcopy(config["suites"]["minibugs"])
    config["models"]["extra"] = copy.deepcopy(config["models"]["tiny"])
    return config


@pytest.mark.parametrize(
    "layer, gone, kept",
    [
        ({"training": {"plan": {"B": None}}}, ("training", "plan", "B"), "M"),
        ({"suites": {"extra": None}}, ("suites", "extra"), "minibugs"),
        ({"models": {"extra": None}}, ("models", "extra"), "tiny"),
        ({"stats": {"comparisons": {"M-O": None}}}, ("stats", "comparisons", "M-O"), "M-B"),
        (
            {"evaluation": {"evalsets": {"broad": None}}},
            ("evaluation", "evalsets", "broad"),
            "holdout",
        ),
    ],
)
def test_a_layer_removes_a_named_entry_by_setting_it_null(layer, gone, kept):
    node = validate_config(merged(_with_extra_entries(), layer))
    for key in gone[:-1]:
        node = node[key]
    assert gone[-1] not in node and kept in node


@pytest.mark.parametrize(
    "layer, message",
    [
        ({"agent": {"max_turns": None}}, "field agent.max_turns"),
        ({"training": {"grpo": None}}, "field training.grpo"),
    ],
)
def test_a_null_outside_the_named_maps_is_refused_by_name(layer, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        validate_config(merged(default_config(), layer))


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("training", "grpo", "credit_lamda"), 0.1, "training.grpo.credit_lamda: unknown key"),
        (("stats", "gate", "min_difference"), "4", "stats.gate.min_difference: expected a number"),
        (("evaluation", "evalsets", "holdout", "samples"), True, "holdout.samples: expected an"),
        (("training", "grpo", "policy_loss"), "grpo", "training.grpo: TrainConfig.policy_loss"),
        (("training", "pool_size"), 3, "training.pool_size: 3 is smaller than training.grpo"),
        (("training", "pool_screen", "samples"), 1, "pool_screen.samples: 1; a task solved"),
        (("training", "pool_screen", "candidates"), 7, "candidates: 7 is smaller than"),
        # a cluster's address with Ray off would silently run local processes
        (("training", "ray", "address"), "ray-head:6379", "training.ray.address: 'ray-head"),
    ],
)
def test_the_tree_refuses_what_the_schema_let_through(path, value, message):
    """The tree checks again on its own (a config built in code skips the schema)."""
    config = validate_config(default_config())
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        Settings.from_config(config)


def _schema_fields(schema: dict[str, Any], cls: type, path: str) -> list[str]:
    """Where a schema object and its settings class disagree on the keys (recursively)."""
    import typing

    props = resolved(schema).get("properties", {})
    names = {f.name for f in dataclasses.fields(cls)}
    wrong = [f"{path}: schema only {sorted(set(props) - names)}"] if set(props) - names else []
    if names - set(props):
        wrong.append(f"{path}: settings only {sorted(names - set(props))}")
    hints = typing.get_type_hints(cls)
    for name in sorted(names & set(props)):
        hint, sub = hints[name], props[name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if dataclasses.is_dataclass(hint) or (args and dataclasses.is_dataclass(args[0])):
            target = hint if dataclasses.is_dataclass(hint) else args[0]
            wrong += _schema_fields(sub, target, f"{path}.{name}")
        elif typing.get_origin(hint) is dict and dataclasses.is_dataclass(typing.get_args(hint)[1]):
            wrong += _schema_fields(
                resolved(sub)["additionalProperties"],
                typing.get_args(hint)[1],
                f"{path}.{name}.<name>",
            )
    return wrong


def test_the_settings_classes_mirror_the_schema():
    """A key added to config/schema.yaml needs its field in editcredit.settings (and back)."""
    assert _schema_fields(SCHEMA, Settings, "config") == []


def test_a_section_on_its_own_takes_the_schemas_defaults_and_bounds():
    """A job that holds one section (``generation``) validates and fills it by the schema's
    subschema: no default or bound of its own."""
    from editcredit.config import section_config
    from editcredit.policy.generator_factory import GenerationSettings

    config = validate_config(default_config())
    defaults = section_config("generation", None)
    assert section_config("generation", {}) == defaults
    assert defaults["fast"] == {"compile": True} and defaults["backend"] == "transformers"
    typed = Settings.from_config(config).generation
    assert GenerationSettings.from_config(typed) == GenerationSettings.from_config(
        config["generation"]
    )
    with pytest.raises(ConfigError, match=r"generation\.vllm\.tensor_parallel_size"):
        section_config("generation", {"vllm": {"tensor_parallel_size": 0}})
    with pytest.raises(ConfigError, match=r"unknown keys \['speed'\]"):
        section_config("generation.fast", {"speed": 2})
