"""Tests of the lazy safetensors reader and of bf16 conversion."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from editcredit.audit.dtype_align import f32_to_bf16_bits, f64_to_bf16_bits, to_storage
from editcredit.io.safetensors_reader import Checkpoint, SafetensorsError, SafetensorsFile

ALL_NUMPY = {
    "f64": np.array([[1.5, -2.0], [np.inf, 3e300]], dtype=np.float64),
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "f16": np.array([0.5, -65504, 1e-7], dtype=np.float16),
    "i64": np.array([-(2**62), 5], dtype=np.int64),
    "i32": np.array([[-7, 8, 9]], dtype=np.int32),
    "i16": np.array([-300, 300], dtype=np.int16),
    "i8": np.array([-128, 127, 3], dtype=np.int8),
    "u8": np.array([0, 255], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
}


def test_round_trip_all_numpy_dtypes(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file(ALL_NUMPY, str(path), metadata={"format": "np"})
    st = SafetensorsFile(path)
    assert st.metadata == {"format": "np"}
    assert set(st.tensors) == set(ALL_NUMPY)
    seen = dict(st.iter_tensors())
    for name, ref in ALL_NUMPY.items():
        got = seen[name]
        assert got.dtype == ref.dtype and got.shape == ref.shape, name
        np.testing.assert_array_equal(got, ref)


def test_every_bf16_pattern_decodes_like_the_ieee_formula(tmp_path, write_raw, bf16_ref):
    bf16_value, _ = bf16_ref
    bits = np.arange(65536, dtype="<u2")
    path = write_raw(tmp_path / "b.safetensors", {"w": ("BF16", (256, 256), bits.tobytes())})
    got = SafetensorsFile(path).read("w").ravel()
    assert got.dtype == np.float32
    ref = np.array([bf16_value(int(b)) for b in bits], dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(got[ok].astype(np.float64), ref[ok])


def _tricky_values() -> np.ndarray:
    rng = np.random.default_rng(0)
    ties = [struct.unpack("<f", struct.pack("<I", (h << 16) | 0x8000))[0] for h in (0x3F80, 0x3F81)]
    specials = [0.0, -0.0, 1.0, -1.5, 3.0e38, 3.39e38, 3.3961e38, -3.4e38, 1e-40, -1e-45]
    specials += [math.inf, -math.inf, *ties, 1 + 2**-8, 1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-30]
    rand = rng.standard_normal(2000) * np.exp(rng.uniform(-90, 90, 2000))
    return np.concatenate([np.array(specials), rand])


def test_f32_to_bf16_is_round_to_nearest_even(bf16_ref):
    _, round_bits = bf16_ref
    with np.errstate(over="ignore"):
        x = _tricky_values().astype(np.float32)
    got = f32_to_bf16_bits(x)
    ref = [round_bits(float(v)) for v in x]
    assert got.tolist() == ref
    assert f32_to_bf16_bits(np.array([np.nan], np.float32))[0] & 0x7FC0 == 0x7FC0


def test_f64_to_bf16_rounds_once(bf16_ref):
    _, round_bits = bf16_ref
    x = _tricky_values()
    got = f64_to_bf16_bits(x)
    assert got.tolist() == [round_bits(float(v)) for v in x]
    # double rounding via float32 would give 0x3F80 here; a single rounding gives 0x3F81
    assert f64_to_bf16_bits(np.array([1 + 2**-8 + 2**-30]))[0] == 0x3F81
    assert to_storage(np.array([1 + 2**-8 + 2**-30]), "BF16")[0] == 0x3F81


def _header_file(tmp_path, header: object, data: bytes = b"", raw: bytes | None = None):
    text = raw if raw is not None else json.dumps(header).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "needle"),
    [
        ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "'w'"),
        ({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "ends at"),
        ({"w": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "dtype"),
        ({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4, "shape"),
        ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8, "gap"),
        (
            {
                "a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]},
            },
            b"\0" * 6,
            "overlap",
        ),
        ({"w": {"dtype": "F32", "shape": [1]}}, b"\0" * 4, "data_offsets"),
        ({"__metadata__": {"a": 1}}, b"", "__metadata__"),
        ([1, 2], b"", "JSON object"),
    ],
)
def test_malformed_header_errors_name_the_file(tmp_path, header, data, needle):
    path = _header_file(tmp_path, header, data)
    with pytest.raises(SafetensorsError) as err:
        SafetensorsFile(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_structural_errors_name_the_file(tmp_path):
    cases = {
        "short": b"\1\0\0",
        "too_long": struct.pack("<Q", 10**6) + b"{}",
        "not_json": struct.pack("<Q", 3) + b"{x}",
        "dup": struct.pack("<Q", 17) + b'{"a": {}, "a": 1}',
    }
    for name, blob in cases.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(blob)
        with pytest.raises(SafetensorsError, match=str(path)):
            SafetensorsFile(path)


def test_sharded_directory_is_one_key_space(tmp_path):
    a = {"x": np.ones((2, 2), np.float32)}
    b = {"y": np.arange(3, dtype=np.int64), "z": np.zeros(1, np.float16)}
    save_file(a, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file(b, str(tmp_path / "model-00002-of-00002.safetensors"))
    weight_map = {"x": "model-00001-of-00002.safetensors"}
    weight_map |= {k: "model-00002-of-00002.safetensors" for k in b}
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    ckpt = Checkpoint(tmp_path)
    assert sorted(ckpt.keys()) == ["x", "y", "z"]
    np.testing.assert_array_equal(ckpt.read("y"), b["y"])
    assert {n for n, _ in ckpt.iter_tensors()} == {"x", "y", "z"}

    weight_map["y"] = "model-00001-of-00002.safetensors"
    index.write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(SafetensorsError, match="'y'"):
        Checkpoint(tmp_path)
    index.unlink()
    save_file({"x": np.zeros(1, np.float32)}, str(tmp_path / "model-extra.safetensors"))
    with pytest.raises(SafetensorsError, match="also stored"):
        Checkpoint(tmp_path)


def test_empty_directory_is_an_error(tmp_path):
    with pytest.raises(SafetensorsError, match=str(tmp_path)):
        Checkpoint(tmp_path)
