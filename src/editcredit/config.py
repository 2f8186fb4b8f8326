"""Load the workflow config and validate it against config/schema.yaml (with defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def validate_config(
    config: dict[str, Any], schema_path: Path = DEFAULT_SCHEMA, source: str = "config"
) -> dict[str, Any]:
    """Fill defaults in place and validate; raise ConfigError naming the offending field."""
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
