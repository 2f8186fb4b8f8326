"""What the hashes of ``editcredit verify`` cannot vouch for: outputs built from a dirty tree,
and results recorded under another config than the current one.

Pure functions over the ``code`` blocks and ``config_sha256`` values read from provenance
blocks and identity receipts; one ``Drift`` per cause, listing the outputs it covers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from editcredit.config import DEFAULT_SCHEMA, ConfigError, validate_config
from editcredit.io.provenance import config_hash

__all__ = ["Drift", "config_drift", "current_config_hash", "dirty_drift"]

_CODE_KEYS = ("git_commit", "git_diff_sha256", "git_untracked_sha256")


@dataclass(frozen=True)
class Drift:
    """Outputs one cause leaves untraceable or stale.

    ``kind``: ``dirty`` (built from a tree with uncommitted changes; ``detail`` names the
    commit, the uncommitted diff's and the untracked files' hashes) or ``config`` (the
    recorded config hash is not the current config's; ``detail`` names both).
    """

    kind: str
    detail: str
    paths: list[str]

    @property
    def what(self) -> str:
        return {"dirty": "built from a dirty tree", "config": "built under another config"}[
            self.kind
        ]


def _short(digest: str) -> str:
    return digest[:12] if digest else "(none or not recorded)"


def dirty_drift(codes: Mapping[str, Any]) -> tuple[list[Drift], int]:
    """Outputs whose code block says ``git_dirty``, one group per (commit, diff, untracked);
    and how many outputs record no git checkout (``git_dirty`` null: code unknown)."""
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    unknown = 0
    for node, code in sorted(codes.items()):
        if not isinstance(code, Mapping):
            continue
        if code.get("git_dirty"):
            groups[tuple(str(code.get(k) or "") for k in _CODE_KEYS)].append(node)
        elif code.get("git_dirty") is None:
            unknown += 1
    out = [
        Drift(
            "dirty",
            f"commit {_short(commit)}, uncommitted diff {_short(diff)}, "
            f"untracked files {_short(untracked)}",
            nodes,
        )
        for (commit, diff, untracked), nodes in sorted(groups.items())
    ]
    return out, unknown


def config_drift(configs: Mapping[str, Any], current: str, where: str) -> list[Drift]:
    """Results whose recorded config hash is not ``current`` (the config at ``where``), one
    group per recorded hash."""
    groups: dict[str, list[str]] = defaultdict(list)
    for node, recorded in sorted(configs.items()):
        if recorded != current:
            groups[str(recorded or "")].append(node)
    return [
        Drift("config", f"config SHA256 {_short(rec)}; {where} is {current[:12]} now", nodes)
        for rec, nodes in sorted(groups.items())
    ]


def current_config_hash(path: Path, schema: Path | None = None) -> str:
    """The hash a rule's script records under the config at ``path``: the validated config with
    its schema's defaults filled (``schema``: beside it, else the package's). ``ConfigError``
    names the file when it cannot be read or validated."""
    schema = schema or (path.parent / "schema.yaml")
    try:
        cfg = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read it: {' '.join(str(exc).split())}") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    validate_config(cfg, schema if schema.is_file() else DEFAULT_SCHEMA, str(path))
    return config_hash(cfg)
