"""config/schema.yaml is the one source of every key's type, default and description, and the
typed tree (editcredit.settings) follows it exactly: the same keys, the same types, and a field
required where the schema fills or requires the key (optional, ``None`` when absent, where it
does neither). Checked in both directions, recursively, so a key added to one and not the other,
or typed differently, fails here."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from editcredit.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())

SCALARS = {"integer": int, "number": float, "boolean": bool, "string": str}


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not ref:
        return schema
    target = SCHEMA
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}


def schema_type(schema: dict[str, Any]) -> Any:
    """The Python type a subschema stands for (a dataclass is ``"section"``)."""
    schema = resolved(schema)
    kind = schema.get("type")
    if kind is None and "enum" in schema:
        (kind,) = {type(v).__name__ for v in schema["enum"]}
        kind = {"str": "string", "int": "integer"}[kind]
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "array":
        return list[schema_type(schema["items"])]
    if kind == "object" and "properties" in schema:
        return "section"
    if kind == "object":
        return dict[str, schema_type(schema["additionalProperties"])]
    raise AssertionError(f"no Python type for {schema}")


def mismatches(schema: dict[str, Any], cls: type, path: str) -> list[str]:
    """Where a schema object and its settings class disagree (recursively): keys, types, and
    which keys are required."""
    schema = resolved(schema)
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    wrong = [f"{path}.{k}: schema only" for k in sorted(set(props) - set(fields))]
    wrong += [f"{path}.{k}: settings only" for k in sorted(set(fields) - set(props))]
    for name in sorted(set(props) & set(fields)):
        sub, field, hint, where = resolved(props[name]), fields[name], hints[name], f"{path}.{name}"
        filled = name in required or "default" in sub
        optional = typing.get_origin(hint) in (typing.Union, types.UnionType)
        if optional:
            (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
        if filled and (optional or field.default is not dataclasses.MISSING):
            wrong.append(f"{where}: the schema fills it; the field must be required, no default")
        if not filled and not (optional and field.default is None):
            wrong.append(f"{where}: the schema may leave it out; the field must be X | None = None")
        expected = schema_type(sub)
        if expected == "section":
            if not dataclasses.is_dataclass(hint):
                wrong.append(f"{where}: an object with keys; the field is {hint}")
            else:
                wrong += mismatches(sub, hint, where)
        elif typing.get_origin(expected) is dict and typing.get_origin(hint) is dict:
            value_hint = typing.get_args(hint)[1]
            extra = resolved(sub["additionalProperties"])
            if dataclasses.is_dataclass(value_hint) and schema_type(extra) == "section":
                wrong += mismatches(extra, value_hint, f"{where}.<name>")
            elif value_hint != schema_type(extra):
                wrong.append(f"{where}: schema {expected}, settings {hint}")
        elif typing.get_origin(expected) is list and typing.get_origin(hint) is list:
            item_hint, items = typing.get_args(hint)[0], resolved(sub["items"])
            if dataclasses.is_dataclass(item_hint) and schema_type(items) == "section":
                wrong += mismatches(items, item_hint, f"{where}[]")
            elif item_hint != schema_type(items):
                wrong.append(f"{where}: schema {expected}, settings {hint}")
        elif hint != expected:
            wrong.append(f"{where}: schema {expected}, settings {hint}")
    return wrong


def test_the_settings_tree_is_the_schema_typed():
    assert mismatches(SCHEMA, Settings, "config") == []


def test_sft_config_is_the_schema_s_sft_section_and_the_model_seed():
    """``editcredit.policy.sft.SFTConfig`` holds config ``models.<name>.sft``'s keys, typed as
    the schema types them, and the model's seed, none with a default of its own: the schema
    fills every key (so the settings' ``Sft`` requires it) and ``from_settings`` builds it."""
    from editcredit.policy.sft import SFTConfig
    from editcredit.settings import Sft

    sft = resolved(SCHEMA["properties"]["models"]["additionalProperties"])["properties"]["sft"]
    keys = sft["properties"]
    fields = {f.name: f for f in dataclasses.fields(SFTConfig)}
    assert set(fields) == set(keys) | {"seed"}
    assert all("default" in keys[k] for k in keys), "every SFT key has the schema's default"
    hints = typing.get_type_hints(SFTConfig)
    assert {k: hints[k] for k in keys} == {k: schema_type(keys[k]) for k in keys}
    no_default = (dataclasses.MISSING, dataclasses.MISSING)
    assert all((f.default, f.default_factory) == no_default for f in fields.values())
    section = Sft.from_mapping({k: v["default"] for k, v in keys.items()})
    built = SFTConfig.from_settings(section, seed=7)
    assert dataclasses.asdict(built) == {**section.to_dict(), "seed": 7}
