"""Fixtures for the parameter-audit tests: a raw safetensors writer and reference bf16 maths.

The references here are deliberately independent of ``editcredit.audit``: bf16 values come from
the sign/exponent/mantissa formula and rounding from exact ``Fraction`` arithmetic.
"""

from __future__ import annotations

import bisect
import json
import math
import struct
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest


def _write_raw(
    path: Path,
    tensors: dict[str, tuple[str, tuple[int, ...], bytes]],
    metadata: dict[str, str] | None = None,
) -> Path:
    """Write ``{name: (dtype, shape, raw_bytes)}`` as a safetensors file, in the given order."""
    header: dict[str, object] = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    pos = 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + len(raw)]}
        pos += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(t[2] for t in tensors.values()))
    return path


def bf16_value(bits: int) -> float:
    """Value of a bf16 bit pattern from the IEEE formula (1 sign, 8 exponent, 7 fraction bits)."""
    sign = -1.0 if bits >> 15 else 1.0
    exp, frac = (bits >> 7) & 0xFF, bits & 0x7F
    if exp == 0xFF:
        return math.nan if frac else sign * math.inf
    if exp == 0:
        return sign * math.ldexp(frac, -126 - 7)
    return sign * math.ldexp(128 + frac, exp - 127 - 7)


# 0x0000..0x7F7F are the finite non-negative bf16 values, increasing; 0x7F80 (inf) stands in as
# 2**128, the next value the exponent range would give, so that rounding overflows correctly.
_POS_FINITE = list(range(0x7F81))
_POS_VALUES = [Fraction(bf16_value(b)) for b in _POS_FINITE[:-1]] + [Fraction(2) ** 128]
_OVERFLOW = Fraction(2) ** 128


def bf16_round_bits(x: float) -> int:
    """bf16 bits of ``x`` rounded once, to nearest with ties to even, by exact arithmetic."""
    if math.isnan(x):
        return 0x7FC0
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return sign | 0x7F80
    mag = abs(Fraction(x))
    if mag >= _OVERFLOW:
        return sign | 0x7F80
    i = bisect.bisect_right(_POS_VALUES, mag) - 1
    if _POS_VALUES[i] == mag:
        return sign | _POS_FINITE[i]
    lo, hi = _POS_VALUES[i], _POS_VALUES[i + 1]
    if mag - lo < hi - mag:
        return sign | _POS_FINITE[i]
    if mag - lo > hi - mag:
        return sign | _POS_FINITE[i + 1]
    return sign | (_POS_FINITE[i] if _POS_FINITE[i] % 2 == 0 else _POS_FINITE[i + 1])


@pytest.fixture
def write_raw() -> Callable[..., Path]:
    return _write_raw


@pytest.fixture
def bf16_ref() -> tuple[Callable[[int], float], Callable[[float], int]]:
    """``(bf16_value, bf16_round_bits)``."""
    return bf16_value, bf16_round_bits


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory) -> Path:
    """A tiny Qwen2 base model directory (read-only for the tests: copy before editing)."""
    from ckpt_factory import tiny_qwen2

    return tiny_qwen2(tmp_path_factory.mktemp("tiny") / "base")
