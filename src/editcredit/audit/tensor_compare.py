"""Chunk-wise comparison of a checkpoint tensor with a reference tensor (base or previous).

A tensor is compared segment by segment, so memory stays bounded by the segment size. The
reference is first aligned to the checkpoint's dtype (``dtype_align.to_storage``). An element is
*changed* when its stored bits differ from the aligned reference's, except that NaN against NaN
counts as unchanged (so ``-0.0`` vs ``0.0`` is a change, a NaN payload difference is not).
Norms accumulate in float64. Fast path: when ``||c - r||^2`` and ``||r||^2`` are both finite,
neither side holds NaN/inf, so the explicit non-finite counts are skipped. Temporaries live in a
reused ``Workspace``: fresh multi-MiB arrays per segment would be mmapped and page-faulted anew.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from editcredit.audit.dtype_align import nonfinite_count, to_storage
from editcredit.io.safetensors_reader import DTYPES, FLOAT_DTYPES, decode

__all__ = [
    "DeltaAccumulator",
    "Segment",
    "Workspace",
    "bits_view",
    "relative_change",
    "sum_squares",
]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: rows of at most 8192 keep each BLAS dot single-threaded (OpenBLAS threads ddot above 10000
#: elements, and its spinning threads then compete with the hashing threads for the cores)
_ROW = 8192


def sum_squares(x: np.ndarray) -> float:
    """``sum(x * x)`` of a contiguous 1-D float64 array, accumulated in float64."""
    n = x.size - x.size % _ROW
    total = float(np.dot(x[n:], x[n:]))
    if n:
        rows = x[:n].reshape(-1, _ROW)
        total += float(np.vecdot(rows, rows).sum())
    return total


def bits_view(storage: np.ndarray) -> np.ndarray:
    """The same memory as unsigned integers of equal width (for bitwise comparison)."""
    return storage.view(_UINT[storage.dtype.itemsize])


class Workspace:
    """Named scratch arrays, allocated once at the largest size asked for and then reused."""

    def __init__(self) -> None:
        self._arrays: dict[tuple[str, np.dtype], np.ndarray] = {}

    def get(self, name: str, n: int, dtype: type | np.dtype = np.float64) -> np.ndarray:
        key = (name, np.dtype(dtype))
        arr = self._arrays.get(key)
        if arr is None or arr.size < n:
            arr = self._arrays[key] = np.empty(max(n, 1), dtype=dtype)
        return arr[:n]

    def decode(self, name: str, buf: memoryview, dtype: str) -> np.ndarray:
        """``decode(buf, dtype)`` that widens BF16 into a reused buffer."""
        if dtype != "BF16":
            return decode(buf, dtype)
        bits = np.frombuffer(buf, dtype=DTYPES[dtype])
        out = self.get(name, bits.size, np.uint32)
        np.left_shift(bits, np.uint32(16), out=out)
        return out.view(np.float32)

    def float64(self, name: str, values: np.ndarray) -> np.ndarray:
        """``values`` as float64, copied into a reused buffer unless already float64."""
        if values.dtype == np.float64:
            return values
        out = self.get(name, values.size)
        np.copyto(out, values, casting="unsafe")
        return out


@dataclass
class Segment:
    """One contiguous piece of a checkpoint tensor: stored array, values and float64 values."""

    dtype: str
    storage: np.ndarray
    values: np.ndarray
    values64: np.ndarray
    known_finite: bool = False

    @classmethod
    def from_bytes(cls, buf: memoryview, dtype: str, ws: Workspace) -> Segment:
        storage = np.frombuffer(buf, dtype=DTYPES[dtype])
        values = ws.decode("ckpt_bf16", buf, dtype)
        return cls(dtype, storage, values, ws.float64("ckpt64", values))

    def nonfinite(self) -> int:
        """Non-finite elements in this segment (free when a comparison proved it finite)."""
        if self.known_finite or self.dtype not in FLOAT_DTYPES:
            return 0
        return nonfinite_count(self.values, self.dtype)


@dataclass
class DeltaAccumulator:
    """Running comparison of one checkpoint tensor against one reference tensor."""

    ref_dtype: str
    changed: int = 0
    diff_sq: float = 0.0
    ref_sq: float = 0.0
    ref_nonfinite: int = 0
    cast_nonfinite: int = 0

    def add(self, seg: Segment, ref_buf: memoryview, ws: Workspace) -> None:
        """Compare ``seg`` with the reference bytes covering the same elements."""
        ref_values = ws.decode("ref_bf16", ref_buf, self.ref_dtype)
        if self.ref_dtype == seg.dtype:
            cast_storage, cast_values = np.frombuffer(ref_buf, DTYPES[seg.dtype]), ref_values
        else:
            cast_storage = to_storage(ref_values, seg.dtype)
            cast_values = ws.decode("cast_bf16", cast_storage.data, seg.dtype)
        cast64 = ws.float64("ref64", cast_values)
        differs = ws.get("differs", seg.storage.size, np.bool_)
        np.not_equal(bits_view(seg.storage), bits_view(cast_storage), out=differs)
        changed = int(np.count_nonzero(differs))
        with np.errstate(all="ignore"):
            delta = np.subtract(seg.values64, cast64, out=ws.get("delta", cast64.size))
            diff_sq = sum_squares(delta)
            ref_sq = sum_squares(cast64)
        self.diff_sq += diff_sq
        self.ref_sq += ref_sq
        if math.isfinite(diff_sq) and math.isfinite(ref_sq):
            seg.known_finite = True
            # a float->float cast keeps NaN/inf, so a finite cast implies a finite original
            if seg.dtype not in FLOAT_DTYPES and self.ref_dtype in FLOAT_DTYPES:
                self.ref_nonfinite += nonfinite_count(ref_values, self.ref_dtype)
            self.changed += changed
            return
        cast_nf = nonfinite_count(cast_values, seg.dtype)
        self.cast_nonfinite += cast_nf
        self.ref_nonfinite += (
            cast_nf if self.ref_dtype == seg.dtype else nonfinite_count(ref_values, self.ref_dtype)
        )
        if seg.dtype in FLOAT_DTYPES:
            both_nan = np.isnan(seg.values) & np.isnan(cast_values)
            changed -= int(np.count_nonzero(both_nan & differs))
        self.changed += changed

    @property
    def relative_change(self) -> float:
        """``||c - r|| / ||r||`` over the whole tensor."""
        return relative_change(self.diff_sq, self.ref_sq)


def relative_change(diff_sq: float, ref_sq: float) -> float:
    """``sqrt(diff_sq / ref_sq)``: 0 if both are 0, inf if only ``ref_sq`` is, NaN if either is."""
    if math.isnan(diff_sq) or math.isnan(ref_sq):
        return math.nan
    if ref_sq == 0.0:
        return 0.0 if diff_sq == 0.0 else math.inf
    return math.sqrt(diff_sq) / math.sqrt(ref_sq)
