"""A check that a written record has the shape of its TypedDict: the same keys in the same order
(so the record's bytes are the writer's), recursively through nested records, lists and maps.
A key that is not required (a ``total=False`` part) may be missing; where present it keeps its
place."""

from __future__ import annotations

import types
import typing
from typing import Any, NotRequired, get_args, get_origin, get_type_hints, is_typeddict


def _required(record: Any) -> set[str]:
    """The keys ``record`` requires: not those of a ``total=False`` part nor those marked
    ``NotRequired`` (which a module with postponed annotations leaves in ``__required_keys__``)."""
    marked = get_type_hints(record, include_extras=True)
    optional = {k for k, hint in marked.items() if get_origin(hint) is NotRequired}
    return set(record.__required_keys__) - set(record.__optional_keys__) - optional


def assert_record(value: Any, record: Any, where: str = "record", *, ordered: bool = True) -> None:
    """Fail, naming the place, unless ``value`` fits the annotation ``record``.

    A TypedDict's value must have exactly its keys, in declaration order (in any order with
    ``ordered=False``: a file written with sorted keys, as ``write_result_json`` writes them),
    less any of its keys that are not required;
    ``X | None`` takes
    None; ``list[X]`` and ``dict[str, X]`` check each item. Scalars are not checked (the writer's
    own tests hold their values).
    """
    if is_typeddict(record):
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        hints = get_type_hints(record)
        missing = sorted(_required(record) - set(value))
        assert not missing, f"{where}: missing required keys {missing}"
        keys = list(value) if ordered else sorted(value)
        present = [k for k in hints if k in value]
        want = present if ordered else sorted(present)
        assert keys == want, f"{where}: keys {keys} != {want}"
        for key in present:
            assert_record(value[key], hints[key], f"{where}.{key}", ordered=ordered)
        return
    origin = get_origin(record)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in get_args(record):
            return
        records = [a for a in get_args(record) if is_typeddict(a) or get_origin(a) is not None]
        for option in records:
            assert_record(value, option, where, ordered=ordered)
        return
    if origin is list:
        (item,) = get_args(record)
        assert isinstance(value, list | tuple), f"{where}: {type(value).__name__}, not a list"
        for i, x in enumerate(value):
            assert_record(x, item, f"{where}[{i}]", ordered=ordered)
        return
    if origin is dict:
        _, item = get_args(record)
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        for k, x in value.items():
            assert_record(x, item, f"{where}[{k!r}]", ordered=ordered)
