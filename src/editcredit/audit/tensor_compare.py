"""Chunk-wise comparison of a checkpoint tensor with a reference tensor (base or previous).

A tensor is compared segment by segment, so memory stays bounded by the segment size. The
reference is first aligned to the checkpoint's dtype (``dtype_align.to_storage``). An element is
*changed* when its stored bits differ from the aligned reference's, except that NaN against NaN
counts as unchanged (so ``-0.0`` vs ``0.0`` is a change, a NaN payload difference is not).
Norms accumulate in float64. Fast path: when ``||c - r||^2`` and ``||r||^2`` are both finite,
neither side holds NaN/inf, so the explicit non-finite counts are skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from editcredit.audit.dtype_align import nonfinite_count, to_storage
from editcredit.audit.safetensors_reader import DTYPES, FLOAT_DTYPES, decode

__all__ = ["DeltaAccumulator", "Segment", "bits_view"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits_view(storage: np.ndarray) -> np.ndarray:
    """The same memory as unsigned integers of equal width (for bitwise comparison)."""
    return storage.view(_UINT[storage.dtype.itemsize])


@dataclass
class Segment:
    """One contiguous piece of a checkpoint tensor: stored array, values and float64 values."""

    dtype: str
    storage: np.ndarray
    values: np.ndarray
    values64: np.ndarray
    known_finite: bool = False

    @classmethod
    def from_bytes(cls, buf: memoryview, dtype: str) -> Segment:
        storage = np.frombuffer(buf, dtype=DTYPES[dtype])
        values = decode(buf, dtype)
        return cls(dtype, storage, values, values.astype(np.float64))

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

    def add(self, seg: Segment, ref_buf: memoryview) -> None:
        """Compare ``seg`` with the reference bytes covering the same elements."""
        ref_values = decode(ref_buf, self.ref_dtype)
        if self.ref_dtype == seg.dtype:
            cast_storage, cast_values = np.frombuffer(ref_buf, DTYPES[seg.dtype]), ref_values
        else:
            cast_storage = to_storage(ref_values, seg.dtype)
            cast_values = decode(cast_storage.data, seg.dtype)
        cast64 = cast_values.astype(np.float64)
        differs = bits_view(seg.storage) != bits_view(cast_storage)
        changed = int(np.count_nonzero(differs))
        with np.errstate(all="ignore"):
            delta = seg.values64 - cast64
            diff_sq = float(np.dot(delta, delta))
            ref_sq = float(np.dot(cast64, cast64))
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
            cast_nf
            if self.ref_dtype == seg.dtype
            else nonfinite_count(ref_values, self.ref_dtype)
        )
        if seg.dtype in FLOAT_DTYPES:
            both_nan = np.isnan(seg.values) & np.isnan(cast_values)
            changed -= int(np.count_nonzero(both_nan & differs))
        self.changed += changed

    @property
    def relative_change(self) -> float:
        """``||c - r|| / ||r||`` over the whole tensor (0 if both are zero, inf if r is)."""
        if math.isnan(self.diff_sq) or math.isnan(self.ref_sq):
            return math.nan
        if self.ref_sq == 0.0:
            return 0.0 if self.diff_sq == 0.0 else math.inf
        return math.sqrt(self.diff_sq) / math.sqrt(self.ref_sq)
