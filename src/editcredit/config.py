"""Load the workflow config and validate it against config/schema.yaml (with defaults), and
the strict builder of typed sections (:class:`Section`) that :mod:`editcredit.settings` uses.

The schema is the one home of every key's description, default and bounds: code that holds one
section on its own validates and fills it here (:func:`section_config`), and a record built
outside a validated config checks its values against the bounds the schema declares
(:func:`schema_of`, :func:`bound_violation`)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCHEMA = REPO_ROOT / "config" / "schema.yaml"


class ConfigError(ValueError):
    """The config does not satisfy its schema; the message names the field."""


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = sub["default"]
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


#: The maps of named entries a config layer may remove from the layers below by setting the
#: entry to null (Snakemake merges ``--configfile`` layers key by key, so a layer can add and
#: change entries but not otherwise drop one): ``training: {plan: {B: null}}`` leaves arm B out.
REMOVABLE_ENTRIES = (
    ("models",),
    ("suites",),
    ("training", "plan"),
    ("evaluation", "evalsets"),
    ("stats", "comparisons"),
)


def remove_nulled_entries(config: dict[str, Any]) -> list[str]:
    """Drop, in place, every entry of a :data:`REMOVABLE_ENTRIES` map whose value is null; the
    dotted paths removed. A null anywhere else stays, and the schema rejects it by name."""
    removed = []
    for path in REMOVABLE_ENTRIES:
        entries: Any = config
        for key in path:
            entries = entries.get(key) if isinstance(entries, dict) else None
        if not isinstance(entries, dict):
            continue
        for name in [n for n, value in entries.items() if value is None]:
            del entries[name]
            removed.append(".".join([*path, str(name)]))
    return removed


def validate_config(
    config: dict[str, Any], schema_path: Path = DEFAULT_SCHEMA, source: str = "config"
) -> dict[str, Any]:
    """Drop the entries a layer set to null (:func:`remove_nulled_entries`), fill defaults in
    place and validate; raise ConfigError naming the offending field."""
    remove_nulled_entries(config)
    schema = yaml.safe_load(schema_path.read_text())
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        field = ".".join(str(p) for p in err.absolute_path)
        unknown = unknown_keys(err)
        if unknown:
            paths = ", ".join(f"{field}.{key}" if field else key for key in unknown)
            raise ConfigError(f"{source}: unknown key {paths} (config/schema.yaml lists the keys)")
        raise ConfigError(f"{source}: field {field or '(top level)'}: {err.message}")
    return config


def unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an ``additionalProperties: false`` error rejects (empty for other errors)."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    known = set(error.schema.get("properties", {}))
    return sorted(str(key) for key in error.instance if key not in known)


def load_config(path: str | Path, schema_path: Path = DEFAULT_SCHEMA) -> dict[str, Any]:
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return validate_config(config, schema_path, source=str(path))


@functools.cache
def _loaded_schema(schema_path: Path) -> dict[str, Any]:
    """The schema as read once per process (callers copy what they would change)."""
    return yaml.safe_load(schema_path.read_text())


def schema_of(dotted: str, schema_path: Path = DEFAULT_SCHEMA) -> dict[str, Any]:
    """The subschema of one key of the config by its dotted path (``training.grpo.lr``), to
    read, not to change."""
    schema = _loaded_schema(schema_path)
    node = schema
    for key in dotted.split(".") if dotted else []:
        node = _resolved(node, schema)["properties"][key]
    return _resolved(node, schema)


def section_config(
    dotted: str, data: Mapping[str, Any] | None, schema_path: Path = DEFAULT_SCHEMA
) -> dict[str, Any]:
    """One section of the config (``generation``) on its own, validated against its subschema
    with the schema's defaults filled, as :func:`validate_config` does for the whole config (a
    copy; ``None`` is the empty section). ConfigError names the first offending key."""
    defs = _loaded_schema(schema_path).get("$defs", {})
    schema = copy.deepcopy({**schema_of(dotted, schema_path), "$defs": defs})
    section = copy.deepcopy(dict(data or {}))
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(section), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = ".".join([dotted, *(str(p) for p in err.absolute_path)])
        unknown = unknown_keys(err)
        if unknown:
            known = sorted(err.schema.get("properties", {}))
            raise ConfigError(f"config {where}: unknown keys {unknown}; known {', '.join(known)}")
        raise ConfigError(f"config: field {where}: {err.message}")
    return section


def _resolved(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    target = schema
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def bound_violation(schema: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` breaks the ``enum`` or numeric bounds of its subschema (None when it keeps
    them): the schema's own bounds, for values built outside a validated config."""
    if "enum" in schema:
        if value in schema["enum"]:
            return None
        return f"{value!r} is not one of {', '.join(str(v) for v in schema['enum'])}"
    low, high = schema.get("minimum"), schema.get("maximum")
    low_open, high_open = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if low_open is not None:
        low = low_open
    if high_open is not None:
        high = high_open
    below = low is not None and (value <= low if low_open is not None else value < low)
    above = high is not None and (value >= high if high_open is not None else value > high)
    if not (below or above):
        return None
    if low is not None and high is not None:
        left, right = "(" if low_open is not None else "[", ")" if high_open is not None else "]"
        return f"must be in {left}{low:g}, {high:g}{right}"
    if low is not None:
        return f"must be {'>' if low_open is not None else '>='} {low:g}"
    return f"must be {'<' if high_open is not None else '<='} {high:g}"


# --- typed sections: built strictly from a validated mapping ---------------------------------

T = TypeVar("T")


class Section:
    """Base of every section: ``from_mapping`` builds it (strictly) from a config mapping."""

    @classmethod
    def from_mapping(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
        return build_section(cls, data, path or _default_path(cls))

    def to_dict(self) -> dict[str, Any]:
        """The section as the plain mapping it was built from (``None`` keys left out)."""
        return _plain(self)


def _default_path(cls: type) -> str:
    doc = (cls.__doc__ or "").split("``")
    return doc[1] if len(doc) > 2 else cls.__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def build_section(cls: type[T], data: Any, path: str) -> T:
    """A dataclass ``cls`` from ``data``, recursively; ConfigError names the first key (by its
    dotted ``path``) that is unknown, missing or of the wrong type."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"config: {path or '(top level)'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    # every Section (and so every ``cls`` here) is a dataclass; a TypeVar cannot say so
    fields = {f.name: f for f in dataclasses.fields(typing.cast(Any, cls))}
    for key in data:
        if key not in fields:
            raise ConfigError(
                f"config: {_join(path, key)}: unknown key (config/schema.yaml and "
                "editcredit.settings list the same keys)"
            )
    values = {}
    for name, field in fields.items():
        if name not in data:
            if field.default is dataclasses.MISSING:
                raise ConfigError(f"config: {_join(path, name)}: missing")
            continue
        values[name] = _convert(hints[name], data[name], _join(path, name))
    return cls(**values)


def _convert(hint: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None:
            return None
        return _convert(options[0], value, path)
    if dataclasses.is_dataclass(hint):
        return build_section(typing.cast(type, hint), value, path)
    if origin is dict:
        key_type, value_type = typing.get_args(hint)
        if not isinstance(value, Mapping):
            raise ConfigError(f"config: {path}: expected a mapping, got {value!r}")
        return {
            _convert(key_type, k, path): _convert(value_type, v, _join(path, str(k)))
            for k, v in value.items()
        }
    if origin is list:
        (item_type,) = typing.get_args(hint)
        if not isinstance(value, list | tuple):
            raise ConfigError(f"config: {path}: expected a list, got {value!r}")
        return [_convert(item_type, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if hint is Any:
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"config: {path}: expected a number, got {value!r}")
        return value
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"config: {path}: expected an integer, got {value!r}")
    if hint in (str, bool) and not isinstance(value, hint):
        raise ConfigError(f"config: {path}: expected {hint.__name__}, got {value!r}")
    return value


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
