"""Frozen result types of a parameter audit (METHOD §10) and their JSON form."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AuditReport",
    "Comparison",
    "DtypeDifference",
    "Exclusion",
    "FileDigest",
    "ShapeMismatch",
    "TensorDelta",
    "TensorDigest",
    "json_ready",
]


def json_ready(value: Any) -> Any:
    """Dataclasses/tuples to dicts/lists; non-finite floats to ``"nan"``, ``"inf"``, ``"-inf"``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_ready(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@dataclass(frozen=True)
class FileDigest:
    """SHA256 of one file of the checkpoint directory (path relative to it)."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class TensorDigest:
    """One checkpoint tensor: SHA256 of its raw bytes and its non-finite element count."""

    name: str
    file: str
    dtype: str
    shape: tuple[int, ...]
    sha256: str
    nonfinite: int


@dataclass(frozen=True)
class ShapeMismatch:
    name: str
    checkpoint_shape: tuple[int, ...]
    reference_shape: tuple[int, ...]


@dataclass(frozen=True)
class DtypeDifference:
    name: str
    checkpoint_dtype: str
    reference_dtype: str


@dataclass(frozen=True)
class Exclusion:
    """A declared exclusion (config ``audit.exclude``): the tensors whose names match
    ``pattern`` (``fnmatch``), in the checkpoint or a reference, left out of every comparison
    for ``reason``; ``keys`` are those it took (each name goes to its first matching pattern)."""

    pattern: str
    reason: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class TensorDelta:
    """One tensor against its reference, after casting the reference to the checkpoint dtype.

    ``relative_change`` is ``||ckpt - cast_ref|| / ||cast_ref||`` accumulated in float64.
    """

    name: str
    numel: int
    changed_elements: int
    relative_change: float
    reference_nonfinite: int
    cast_reference_nonfinite: int


@dataclass(frozen=True)
class Comparison:
    """Checkpoint against one reference checkpoint (its base, or the previous checkpoint)."""

    reference: str
    missing_keys: tuple[str, ...]
    unexpected_keys: tuple[str, ...]
    shape_mismatches: tuple[ShapeMismatch, ...]
    dtype_differences: tuple[DtypeDifference, ...]
    compared_tensors: int
    compared_elements: int
    changed_tensors: int
    changed_elements: int
    reference_nonfinite: int
    cast_reference_nonfinite: int
    relative_change: float
    tensors: tuple[TensorDelta, ...]

    @property
    def complete(self) -> bool:
        """No missing keys and no shape mismatches."""
        return not self.missing_keys and not self.shape_mismatches


@dataclass(frozen=True)
class AuditReport:
    """Everything one audit established; ``ok`` is false iff ``failures`` is non-empty."""

    checkpoint: str
    base: str
    previous: str | None
    files: tuple[FileDigest, ...]
    tensors: tuple[TensorDigest, ...]
    checkpoint_nonfinite: int
    nonfinite_tensors: tuple[str, ...]
    vs_base: Comparison
    vs_previous: Comparison | None
    bytes_read: int
    failures: tuple[str, ...]
    notes: tuple[str, ...] = ()
    excluded: tuple[Exclusion, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``ok`` included; non-finite floats as strings)."""
        out = json_ready(self)
        out["ok"] = self.ok
        return out
