"""Conversion of result records to plain, JSON-ready Python values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def to_plain(value: Any) -> Any:
    """Convert ``value`` recursively to JSON-ready Python values.

    Dataclasses become dicts (through their own ``to_dict`` when they have one), tuples and
    arrays become lists, numpy scalars become Python scalars, and non-finite floats become
    ``None`` (JSON has no NaN). Mapping keys become strings.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return to_dict()
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [to_plain(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, np.generic):
        return to_plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def record_to_dict(record: Any) -> dict[str, Any]:
    """The fields of a dataclass record as a JSON-ready dict (field order kept)."""
    return {f.name: to_plain(getattr(record, f.name)) for f in dataclasses.fields(record)}
