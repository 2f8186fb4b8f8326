"""Tests of ``audit_checkpoint`` (METHOD §10) on small synthetic checkpoints."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from safetensors.numpy import save_file

from editcredit.audit.param_audit import EQUALS_BASE, audit_checkpoint


def _base() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "embed.weight": rng.standard_normal((16, 8)).astype(np.float32),
        "layer.0.weight": rng.standard_normal((8, 8)).astype(np.float32),
        "layer.0.bias": rng.standard_normal(8).astype(np.float32),
        "head.weight": rng.standard_normal((8, 4)).astype(np.float32),
    }


def _save(tmp_path, name: str, tensors: dict[str, np.ndarray]):
    d = tmp_path / name
    d.mkdir()
    save_file(tensors, str(d / "model.safetensors"))
    return d


def _copy(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in tensors.items()}


def test_identical_checkpoint_fails_as_equal_to_base(tmp_path):
    base = _save(tmp_path, "base", _base())
    ckpt = _save(tmp_path, "ckpt", _base())
    rep = audit_checkpoint(ckpt, base)
    assert not rep.ok
    assert rep.failures == (EQUALS_BASE,)
    assert EQUALS_BASE == "checkpoint equals its base: no tensor changed"
    assert rep.vs_base.changed_tensors == 0 and rep.vs_base.changed_elements == 0
    assert rep.vs_base.compared_tensors == 4
    assert all(d.relative_change == 0.0 for d in rep.vs_base.tensors)


def test_one_changed_element(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    changed = _copy(t)
    changed["layer.0.weight"][3, 5] += 0.25
    rep = audit_checkpoint(_save(tmp_path, "ckpt", changed), base)
    assert rep.ok, rep.failures
    assert rep.vs_base.changed_tensors == 1
    assert rep.vs_base.changed_elements == 1
    delta = {d.name: d for d in rep.vs_base.tensors}["layer.0.weight"]
    ref = np.linalg.norm(
        changed["layer.0.weight"].astype(np.float64) - t["layer.0.weight"].astype(np.float64)
    ) / np.linalg.norm(t["layer.0.weight"].astype(np.float64))
    assert delta.changed_elements == 1 and math.isclose(delta.relative_change, ref, rel_tol=1e-12)


def test_nan_is_reported_and_fails(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    bad = _copy(t)
    bad["head.weight"][0, 0] = np.nan
    bad["embed.weight"][1, 1] += 1.0
    rep = audit_checkpoint(_save(tmp_path, "ckpt", bad), base)
    assert not rep.ok
    assert rep.checkpoint_nonfinite == 1
    assert rep.nonfinite_tensors == ("head.weight",)
    assert any("non-finite" in f and "head.weight" in f for f in rep.failures)
    assert {d.name: d.nonfinite for d in rep.tensors}["head.weight"] == 1
    assert rep.vs_base.reference_nonfinite == 0
    assert rep.vs_base.changed_elements == 2
    assert json.dumps(rep.to_dict(), allow_nan=False)  # NaN norms are serialised as strings


def test_nan_in_both_is_not_a_change_but_counts_in_base(tmp_path):
    t = _base()
    t["head.weight"][2, 2] = np.inf
    t["layer.0.bias"][0] = np.nan
    base = _save(tmp_path, "base", t)
    ckpt = _copy(t)
    ckpt["layer.0.bias"][:1] = np.frombuffer(np.uint32(0x7FC00001).tobytes(), np.float32)
    rep = audit_checkpoint(_save(tmp_path, "ckpt", ckpt), base)
    assert rep.vs_base.changed_elements == 0
    assert rep.vs_base.reference_nonfinite == 2
    assert rep.vs_base.cast_reference_nonfinite == 2
    assert rep.checkpoint_nonfinite == 2


def test_missing_tensor(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    c = _copy(t)
    del c["head.weight"]
    c["embed.weight"][0, 0] = 7.0
    c["extra"] = np.zeros(2, np.float32)
    rep = audit_checkpoint(_save(tmp_path, "ckpt", c), base)
    assert rep.vs_base.missing_keys == ("head.weight",)
    assert rep.vs_base.unexpected_keys == ("extra",)
    assert not rep.ok and any("missing" in f and "head.weight" in f for f in rep.failures)


def test_changed_shape(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    c = _copy(t)
    c["head.weight"] = c["head.weight"].reshape(4, 8)
    c["embed.weight"][0, 0] = 7.0
    rep = audit_checkpoint(_save(tmp_path, "ckpt", c), base)
    (mm,) = rep.vs_base.shape_mismatches
    assert (mm.name, mm.checkpoint_shape, mm.reference_shape) == ("head.weight", (4, 8), (8, 4))
    assert rep.vs_base.compared_tensors == 3
    assert not rep.ok and any("shape mismatch" in f for f in rep.failures)


def _bf16_file(write_raw, path, tensors: dict[str, np.ndarray], round_bits):
    """Store float tensors as BF16, rounded by the independent Fraction reference."""
    entries = {}
    for name, arr in tensors.items():
        bits = np.array([round_bits(float(v)) for v in arr.ravel()], dtype="<u2")
        entries[name] = ("BF16", arr.shape, bits.tobytes())
    path.mkdir()
    write_raw(path / "model.safetensors", entries)
    return path


def test_dtype_change_f32_to_bf16(tmp_path, write_raw, bf16_ref):
    _, round_bits = bf16_ref
    t = _base()
    t["layer.0.bias"][:3] = [1 + 2**-8, 1 + 3 * 2**-8, 3.4e38]  # ties and an overflow to inf
    base = _save(tmp_path, "base", t)
    ckpt = _bf16_file(write_raw, tmp_path / "ckpt", t, round_bits)
    rep = audit_checkpoint(ckpt, base)
    diffs = {(d.name, d.checkpoint_dtype, d.reference_dtype) for d in rep.vs_base.dtype_differences}
    assert diffs == {(n, "BF16", "F32") for n in t}
    assert rep.vs_base.changed_elements == 0  # the bf16 copy of the base is unchanged
    assert rep.vs_base.reference_nonfinite == 0
    assert rep.vs_base.cast_reference_nonfinite == 1  # 3.4e38 rounds to inf in bf16
    assert rep.checkpoint_nonfinite == 1
    assert EQUALS_BASE in rep.failures

    t2 = _copy(t)
    t2["head.weight"][1, 1] += 0.5
    rep2 = audit_checkpoint(_bf16_file(write_raw, tmp_path / "ckpt2", t2, round_bits), base)
    assert (rep2.vs_base.changed_tensors, rep2.vs_base.changed_elements) == (1, 1)


def test_cast_base_overflow_counted_separately(tmp_path):
    base = _save(tmp_path, "base", {"w": np.array([1.0, 1e5, 2.0], np.float32)})
    ckpt = _save(tmp_path, "ckpt", {"w": np.array([1.0, 5.0, 2.0], np.float16)})
    comp = audit_checkpoint(ckpt, base).vs_base
    assert (comp.reference_nonfinite, comp.cast_reference_nonfinite) == (0, 1)
    assert comp.changed_elements == 1


def test_previous_checkpoint_comparison(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    p = _copy(t)
    p["embed.weight"][0, :2] += 1.0
    prev = _save(tmp_path, "prev", p)
    c = _copy(p)
    c["head.weight"][0, 0] -= 1.0
    rep = audit_checkpoint(_save(tmp_path, "ckpt", c), base, prev)
    assert (rep.vs_base.changed_tensors, rep.vs_base.changed_elements) == (2, 3)
    assert rep.vs_previous is not None
    assert (rep.vs_previous.changed_tensors, rep.vs_previous.changed_elements) == (1, 1)
    assert rep.previous == str(prev) and rep.ok

    same = audit_checkpoint(prev, base, prev)
    assert same.ok and same.vs_previous.changed_elements == 0  # equal to previous is no failure


def test_sharded_directory_and_hashes(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    c = _copy(t)
    c["layer.0.bias"][4] = 0.0
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    names = sorted(c)
    shards = {"model-00001-of-00002.safetensors": names[:2]}
    shards["model-00002-of-00002.safetensors"] = names[2:]
    for fname, keys in shards.items():
        save_file({k: c[k] for k in keys}, str(ckpt / fname))
    weight_map = {k: f for f, ks in shards.items() for k in ks}
    (ckpt / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (ckpt / "config.json").write_text("{}")
    rep = audit_checkpoint(ckpt, base, chunk_bytes=64)
    assert rep.vs_base.changed_elements == 1 and rep.ok
    files = {f.path: f.sha256 for f in rep.files}
    assert set(files) == {*shards, "model.safetensors.index.json", "config.json"}
    for name, digest in files.items():
        assert digest == hashlib.sha256((ckpt / name).read_bytes()).hexdigest()
    for td in rep.tensors:
        assert td.sha256 == hashlib.sha256(c[td.name].tobytes()).hexdigest()
        assert td.file == weight_map[td.name]


@pytest.mark.parametrize("chunk", [8, 24, 1024, 4 << 20])
def test_chunking_with_misaligned_tensors(tmp_path, chunk):
    rng = np.random.default_rng(5)
    t = {
        "a_odd": np.arange(7, dtype=np.int8),
        "b_f16": rng.standard_normal(33).astype(np.float16),
        "c_f32": rng.standard_normal((5, 13)).astype(np.float32),
        "d_empty": np.zeros(0, np.float64),
        "e_f64": rng.standard_normal(9),
        "f_bool": np.array([True, False, True]),
    }
    base = _save(tmp_path, "base", t)
    c = _copy(t)
    c["c_f32"][4, 12] = np.inf
    c["b_f16"][0] += 1
    c["a_odd"][6] = 0
    c["f_bool"][1] = True
    base_f64 = {k: (v.astype(np.float64) if v.dtype == np.float32 else v) for k, v in t.items()}
    base2 = _save(tmp_path, "base_f64", base_f64)
    ckpt = _save(tmp_path, "ckpt", c)
    for ref in (base, base2):
        rep = audit_checkpoint(ckpt, ref, chunk_bytes=chunk)
        assert rep.vs_base.changed_elements == 4 and rep.vs_base.changed_tensors == 4
        assert rep.checkpoint_nonfinite == 1 and rep.nonfinite_tensors == ("c_f32",)
        digests = {td.name: td.sha256 for td in rep.tensors}
        assert digests == {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in c.items()}
        assert {d.name for d in rep.vs_base.dtype_differences} == (
            set() if ref == base else {"c_f32"}
        )


def test_to_dict_is_json_ready(tmp_path):
    t = _base()
    base = _save(tmp_path, "base", t)
    c = _copy(t)
    c["head.weight"] *= 2
    d = audit_checkpoint(_save(tmp_path, "ckpt", c), base).to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["ok"] is True and back["failures"] == []
    assert back["vs_base"]["changed_tensors"] == 1 and back["vs_previous"] is None


@pytest.mark.parametrize("chunk", [16, 40, 4 << 20])
def test_bf16_checkpoint_against_bf16_base(tmp_path, write_raw, bf16_ref, chunk):
    bf16_value, _ = bf16_ref
    rng = np.random.default_rng(3)
    base_bits = {"a": rng.integers(0x3000, 0x4000, 37), "b": rng.integers(0xB000, 0xC000, 300)}
    ckpt_bits = {k: v.copy() for k, v in base_bits.items()}
    ckpt_bits["b"][[7, 299]] += 1
    for label, bits in (("base", base_bits), ("ckpt", ckpt_bits)):
        (tmp_path / label).mkdir()
        entries = {k: ("BF16", (v.size,), v.astype("<u2").tobytes()) for k, v in bits.items()}
        write_raw(tmp_path / label / "model.safetensors", entries)
    rep = audit_checkpoint(tmp_path / "ckpt", tmp_path / "base", chunk_bytes=chunk)
    assert (rep.vs_base.changed_tensors, rep.vs_base.changed_elements) == (1, 2)
    assert rep.vs_base.dtype_differences == ()
    c = np.array([bf16_value(int(x)) for x in ckpt_bits["b"]])
    r = np.array([bf16_value(int(x)) for x in base_bits["b"]])
    delta = {d.name: d for d in rep.vs_base.tensors}["b"]
    assert math.isclose(delta.relative_change, np.linalg.norm(c - r) / np.linalg.norm(r))
