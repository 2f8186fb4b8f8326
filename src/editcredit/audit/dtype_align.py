"""Dtype alignment for parameter audits: cast a reference tensor to a checkpoint's dtype.

Float targets are rounded to nearest, ties to even. numpy has no bfloat16, so BF16 is produced
here from float32 bits (add ``0x7FFF`` plus the kept LSB, shift right by 16); float64 sources go
through float32 with *round-to-odd*, which makes the two-step rounding equal to a direct
float64 -> bf16 round-to-nearest-even. NaN stays NaN (quietened); overflow gives +-inf.
"""

from __future__ import annotations

import warnings

import numpy as np

from editcredit.io.safetensors_reader import DTYPES, FLOAT_DTYPES

__all__ = ["f32_to_bf16_bits", "f64_to_bf16_bits", "to_storage", "nonfinite_count"]


def _bits_f32_to_bf16(bits: np.ndarray, nan: np.ndarray) -> np.ndarray:
    """Round float32 bit patterns to bf16 (nearest, ties to even); ``nan`` marks NaN lanes."""
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    out = ((bits + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
    if nan.any():
        out[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return out


def f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) of float32 ``values``, round-to-nearest-even."""
    x = np.ascontiguousarray(values, dtype=np.float32)
    with np.errstate(over="ignore"):  # uint32 wrap only for NaN lanes, which are overwritten
        return _bits_f32_to_bf16(x.view(np.uint32), np.isnan(x))


def f64_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of float64 ``values``, rounded once (nearest, ties to even)."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = x.astype(np.float32)
        back = r.astype(np.float64)
        bits = r.view(np.uint32).copy()
        inexact = back != x
        # round-to-odd: truncate toward zero, then set the LSB when inexact
        bits[inexact & (np.abs(back) > np.abs(x))] -= np.uint32(1)
        bits[inexact] |= np.uint32(1)
        return _bits_f32_to_bf16(bits, np.isnan(x))


def to_storage(values: np.ndarray, dtype: str) -> np.ndarray:
    """Cast decoded ``values`` to ``dtype``'s storage array (uint16 bit patterns for BF16).

    Float targets round to nearest even; integer and bool targets follow numpy casting (floats
    truncate toward zero, NaN to an unspecified value; bool is ``value != 0``).
    """
    if dtype == "BF16":
        if values.dtype in (np.float32, np.float16):
            return f32_to_bf16_bits(values)
        return f64_to_bf16_bits(values.astype(np.float64))
    target = DTYPES[dtype]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if dtype == "F16" and values.dtype.kind in "iub":
            values = values.astype(np.float64)  # single rounding int -> f16
        return values.astype(target)


def nonfinite_count(values: np.ndarray, dtype: str) -> int:
    """Number of NaN/inf elements of decoded ``values`` (always 0 for integer dtypes)."""
    if dtype not in FLOAT_DTYPES:
        return 0
    return int(values.size - np.count_nonzero(np.isfinite(values)))
