"""Lazy, validating safetensors reader that needs neither torch nor the safetensors package.

The header is parsed here (8-byte little-endian length, JSON with ``dtype``/``shape``/
``data_offsets`` per tensor and an optional ``__metadata__`` map) and every structural rule is
checked before any tensor is read. Tensors are read one at a time with bounded ``pread`` calls,
so memory is bounded by the largest tensor, not by the file. A directory of several
``*.safetensors`` shards (optionally with ``model.safetensors.index.json``) is one key space.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "DTYPES",
    "FLOAT_DTYPES",
    "Checkpoint",
    "SafetensorsError",
    "SafetensorsFile",
    "TensorInfo",
    "decode",
    "pread_into",
]

#: safetensors dtype name -> numpy dtype used to *store* the raw bytes (BF16 is kept as uint16).
DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
FLOAT_DTYPES = frozenset({"F64", "F32", "F16", "BF16"})
MAX_HEADER_BYTES = 100 * 1024 * 1024
INDEX_NAME = "model.safetensors.index.json"


class SafetensorsError(ValueError):
    """A safetensors file or checkpoint directory is malformed; the message names the file."""


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lives: ``begin``/``end`` are absolute byte offsets in ``path``."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int
    path: Path

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype].itemsize

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def decode(buf: bytes | bytearray | memoryview, dtype: str, shape: tuple[int, ...] | None = None):
    """Interpret raw little-endian bytes as a numpy array; BF16 is widened exactly to float32."""
    arr = np.frombuffer(buf, dtype=DTYPES[dtype])
    if dtype == "BF16":
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    return arr if shape is None else arr.reshape(shape)


def pread_into(fd: int, buf: memoryview, offset: int, path: Path | str = "?") -> None:
    """Fill ``buf`` from ``fd`` at ``offset``; a short read is an error naming ``path``."""
    done = 0
    while done < len(buf):
        n = os.preadv(fd, [buf[done:]], offset + done)
        if n == 0:
            raise SafetensorsError(f"{path}: unexpected end of file at byte {offset + done}")
        done += n


def _fail(path: Path, msg: str) -> SafetensorsError:
    return SafetensorsError(f"{path}: {msg}")


def _no_duplicates(path: Path):
    def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in pairs:
            if key in out:
                raise _fail(path, f"duplicate key {key!r} in header")
            out[key] = value
        return out

    return hook


def _parse_entry(path: Path, name: str, entry: object, data_start: int) -> TensorInfo:
    where = f"tensor {name!r}"
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise _fail(path, f"{where}: entry must have exactly dtype, shape and data_offsets")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in DTYPES:
        raise _fail(path, f"{where}: unsupported dtype {dtype!r}")
    ints_ok = isinstance(shape, list) and all(
        type(d) is int and d >= 0 for d in shape
    )  # bool is not a dimension
    if not ints_ok:
        raise _fail(path, f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    if not (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(o) is int and o >= 0 for o in offsets)
        and offsets[0] <= offsets[1]
    ):
        raise _fail(path, f"{where}: data_offsets must be [begin, end] with 0 <= begin <= end")
    expected = math.prod(shape) * DTYPES[dtype].itemsize
    if offsets[1] - offsets[0] != expected:
        raise _fail(
            path,
            f"{where}: shape {shape} of {dtype} needs {expected} bytes "
            f"but data_offsets {offsets} span {offsets[1] - offsets[0]}",
        )
    return TensorInfo(
        name, dtype, tuple(shape), data_start + offsets[0], data_start + offsets[1], path
    )


class SafetensorsFile:
    """One validated safetensors file. Reading is lazy: nothing but the header is loaded."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.file_size = self.path.stat().st_size
        if self.file_size < 8:
            raise _fail(self.path, f"file of {self.file_size} bytes has no 8-byte header length")
        with open(self.path, "rb") as fh:
            header_len = int.from_bytes(fh.read(8), "little")
            if header_len > min(MAX_HEADER_BYTES, self.file_size - 8):
                raise _fail(
                    self.path,
                    f"header length {header_len} exceeds the file ({self.file_size} bytes) "
                    f"or the {MAX_HEADER_BYTES}-byte limit",
                )
            raw = fh.read(header_len)
        self.data_start = 8 + header_len
        try:
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates(self.path))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _fail(self.path, f"header is not valid UTF-8 JSON: {exc}") from None
        if not isinstance(header, dict):
            raise _fail(self.path, "header must be a JSON object")
        meta = header.pop("__metadata__", {})
        if not isinstance(meta, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
        ):
            raise _fail(self.path, "__metadata__ must map strings to strings")
        self.metadata: dict[str, str] = meta
        infos = [_parse_entry(self.path, n, e, self.data_start) for n, e in header.items()]
        infos.sort(key=lambda t: (t.begin, t.end))
        pos = self.data_start
        for info in infos:
            if info.begin != pos:
                kind = "gap before" if info.begin > pos else "overlap at"
                rel = info.begin - self.data_start
                raise _fail(self.path, f"tensor {info.name!r}: {kind} data offset {rel}")
            pos = info.end
        if pos != self.file_size:
            raise _fail(
                self.path,
                f"tensor data ends at byte {pos} but the file has {self.file_size} bytes",
            )
        #: tensors in on-disk (offset) order
        self.tensors: dict[str, TensorInfo] = {t.name: t for t in infos}

    def read_raw(self, name: str) -> bytearray:
        """Raw bytes of one tensor, read with bounded ``pread`` calls."""
        info = self.tensors[name]
        buf = bytearray(info.nbytes)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            pread_into(fd, memoryview(buf), info.begin, self.path)
        finally:
            os.close(fd)
        return buf

    def read(self, name: str) -> np.ndarray:
        """One tensor as a numpy array (BF16 widened to float32)."""
        info = self.tensors[name]
        return decode(self.read_raw(name), info.dtype, info.shape)

    def iter_tensors(self) -> Iterator[tuple[str, np.ndarray]]:
        """Yield ``(name, array)`` one tensor at a time, in on-disk order."""
        for name in self.tensors:
            yield name, self.read(name)


def _shard_paths(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise SafetensorsError(f"{root}: no such checkpoint file or directory")
    paths = sorted(p for p in root.glob("*.safetensors") if p.is_file())
    if not paths:
        raise SafetensorsError(f"{root}: directory holds no *.safetensors file")
    return paths


class Checkpoint:
    """A single safetensors file, or a directory of shards read as one key space."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path)
        self.files = tuple(SafetensorsFile(p) for p in _shard_paths(self.root))
        self.tensors: dict[str, TensorInfo] = {}
        self._file_of: dict[str, SafetensorsFile] = {}
        for shard in self.files:
            for name, info in shard.tensors.items():
                if name in self.tensors:
                    raise SafetensorsError(
                        f"{shard.path}: tensor {name!r} also stored in {self.tensors[name].path}"
                    )
                self.tensors[name] = info
                self._file_of[name] = shard
        if self.root.is_dir() and (self.root / INDEX_NAME).is_file():
            self._check_index(self.root / INDEX_NAME)

    def _check_index(self, index_path: Path) -> None:
        try:
            weight_map = json.loads(index_path.read_text("utf-8"))["weight_map"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SafetensorsError(f"{index_path}: not a valid index ({exc!r})") from None
        if not isinstance(weight_map, dict):
            raise SafetensorsError(f"{index_path}: weight_map must be an object")
        for name, fname in weight_map.items():
            info = self.tensors.get(name)
            if info is None:
                raise SafetensorsError(f"{index_path}: tensor {name!r} is in no shard")
            if info.path.name != fname:
                raise SafetensorsError(
                    f"{index_path}: tensor {name!r} mapped to {fname} but stored in "
                    f"{info.path.name}"
                )
        extra = sorted(set(self.tensors) - set(weight_map))
        if extra:
            raise SafetensorsError(f"{index_path}: tensors missing from weight_map: {extra[:5]}")

    def keys(self) -> list[str]:
        return list(self.tensors)

    def read(self, name: str) -> np.ndarray:
        return self._file_of[name].read(name)

    def read_raw(self, name: str) -> bytearray:
        return self._file_of[name].read_raw(name)

    def iter_tensors(self) -> Iterator[tuple[str, np.ndarray]]:
        """Yield ``(name, array)`` one tensor at a time, shard by shard."""
        for shard in self.files:
            yield from shard.iter_tensors()
