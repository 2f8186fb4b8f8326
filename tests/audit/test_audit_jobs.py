"""The audit jobs on tiny Qwen2 checkpoints laid out as the trainer writes them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from ckpt_factory import load, nudge, save_bf16, variant

from editcredit.audit.jobs import AuditFailed, audit_params_job, audit_summary_job
from editcredit.audit.param_audit import EQUALS_BASE
from editcredit.io.identity import write_identity
from editcredit.io.provenance import read_provenance, sha256_path

CONFIG = {"audit": {"chunk_mib": 1}, "training": {"endpoint_step": 4}}
UP = "model.layers.0.mlp.up_proj.weight"
HEAD = "lm_head.weight"


def step_dir(root: Path, run: str, step: int, src: Path, edit=None) -> Path:
    """``runs/{run}/step_{step}/model`` made from ``src`` plus the step's identity receipt."""
    d = root / "runs" / run / f"step_{step}"
    variant(src, d / "model", edit)
    write_identity(d, {"step": step})
    return d / "model"


def audit(ckpt: Path, base: Path, prev: Path | None, out: Path, step: int = 4, run="M-s1"):
    return audit_params_job(ckpt, base, prev, out, run, step, 4, CONFIG["audit"], CONFIG)


@pytest.fixture
def chain(tmp_path, tiny_base):
    """Base, step 2 (one element moved) and step 4 (two more tensors moved)."""
    base = tmp_path / "models/base/tiny"
    shutil.copytree(tiny_base, base)
    write_identity(base, {})
    s2 = step_dir(tmp_path, "M-s1", 2, base, nudge(UP))
    s4 = step_dir(tmp_path, "M-s1", 4, s2, lambda t: (nudge(HEAD)(t), nudge(UP, (1, 1))(t)))
    return base, s2, s4


def test_endpoint_audit_writes_result_with_provenance(tmp_path, chain):
    base, s2, s4 = chain
    out = tmp_path / "results/audits/M-s1/step_4.json"
    audit(s4, base, s2, out)
    body = json.loads(out.read_text())
    assert body["ok"] and body["failures"] == [] and body["endpoint"]
    assert (body["run"], body["arm"], body["seed"], body["step"]) == ("M-s1", "M", 1, 4)
    assert body["vs_base"]["changed_tensors"] == 2 and body["vs_base"]["changed_elements"] == 3
    assert body["vs_previous"]["changed_tensors"] == 2
    assert body["vs_previous"]["changed_elements"] == 2
    assert body["checkpoint_nonfinite"] == 0 and body["nonfinite_tensors"] == []
    per_tensor = {t["name"]: t["relative_change"] for t in body["vs_base"]["tensors"]}
    assert per_tensor[HEAD] > 0 and per_tensor["model.norm.weight"] == 0
    files = {f["path"] for f in body["files"]}
    assert {"model.safetensors", "config.json"} <= files
    assert len(body["tensors"]) == len(load(s4)) and all(
        len(t["sha256"]) == 64 for t in body["tensors"]
    )
    block = read_provenance(out)
    assert set(block["inputs"]) == {str(s4), str(base), str(s2)}
    # the checkpoint's digest was taken from the audit's own hashes: it must equal a re-hash
    assert block["inputs"][str(s4)] == sha256_path(s4)
    assert block["inputs"][str(base)] == sha256_path(base)
    assert block["code"]["git_commit"] and len(block["config_sha256"]) == 64


def test_base_against_itself_fails_with_the_stated_message(tmp_path, chain):
    base, _, _ = chain
    out = tmp_path / "results/audits/x.json"
    with pytest.raises(AuditFailed, match=EQUALS_BASE) as err:
        audit(base, base, base, out)
    assert str(base) in str(err.value)
    assert EQUALS_BASE == "checkpoint equals its base: no tensor changed"
    assert not out.exists()


def test_endpoint_equal_to_base_fails(tmp_path, chain):
    base, s2, _ = chain
    same = step_dir(tmp_path, "O-s1", 4, base)
    with pytest.raises(AuditFailed, match=EQUALS_BASE):
        audit(same, base, s2, tmp_path / "o.json", run="O-s1")


def test_unchanged_checkpoint_before_the_endpoint_is_a_note(tmp_path, chain):
    base, _, _ = chain
    same = step_dir(tmp_path, "O-s1", 2, base)
    out = tmp_path / "o2.json"
    body = audit(same, base, base, out, step=2, run="O-s1")
    assert body["ok"] and body["vs_base"]["changed_elements"] == 0
    assert any(EQUALS_BASE in n for n in body["notes"])


def _nan(t):
    t[UP][2, 3] = np.nan
    t[HEAD][0, 0] += 1


def _missing(t):
    del t[HEAD]
    t[UP][0, 0] += 1


def _reshaped(t):
    t[UP] = t[UP].reshape(16, 32).copy()


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (_nan, f"non-finite values in checkpoint: 1 in {UP}"),
        (_missing, f"keys missing vs base: {HEAD}"),
        (_reshaped, f"shape mismatch vs base: {UP} is [16, 32], base has [32, 16]"),
    ],
    ids=["nan", "missing-tensor", "changed-shape"],
)
def test_broken_checkpoint_fails_and_says_why(tmp_path, chain, edit, needle):
    base, s2, _ = chain
    bad = step_dir(tmp_path, "B-s1", 4, s2, edit)
    out = tmp_path / "b.json"
    with pytest.raises(AuditFailed) as err:
        audit(bad, base, s2, out, run="B-s1")
    assert needle in str(err.value)
    assert not out.exists()


def test_dtype_change_is_reported_per_tensor(tmp_path, chain):
    base, _, _ = chain
    t = load(base)
    t[UP][0, 0] += np.float32(0.5)
    d = tmp_path / "runs/E-s1/step_4/model"
    shutil.copytree(base, d, ignore=shutil.ignore_patterns("identity.json"))
    save_bf16(t, d / "model.safetensors")
    body = audit(d, base, None, tmp_path / "e.json", run="E-s1")
    diffs = {
        (x["name"], x["checkpoint_dtype"], x["reference_dtype"])
        for x in body["vs_base"]["dtype_differences"]
    }
    assert diffs == {(n, "BF16", "F32") for n in t}
    # after aligning the base to BF16 only the nudged element differs
    assert (body["vs_base"]["changed_tensors"], body["vs_base"]["changed_elements"]) == (1, 1)
    assert body["ok"]


def test_checkpoint_that_differs_from_its_identity_receipt_fails(tmp_path, chain):
    base, s2, s4 = chain
    (s4 / "config.json").write_text((s4 / "config.json").read_text() + " ")
    with pytest.raises(AuditFailed, match="model/config.json differs from the receipt"):
        audit(s4, base, s2, tmp_path / "x.json")


def test_summary_table_has_a_row_per_audit_and_provenance(tmp_path, chain):
    base, s2, s4 = chain
    outs = [
        tmp_path / "results/audits/M-s1/step_2.json",
        tmp_path / "results/audits/M-s1/step_4.json",
    ]
    audit(s2, base, base, outs[0], step=2)
    audit(s4, base, s2, outs[1])
    summary = tmp_path / "results/audits/summary.parquet"
    audit_summary_job(outs, summary, CONFIG)
    rows = pq.read_table(summary).to_pylist()
    assert [(r["run"], r["step"], r["endpoint"]) for r in rows] == [
        ("M-s1", 2, False),
        ("M-s1", 4, True),
    ]
    assert [r["changed_elements"] for r in rows] == [1, 3]
    assert [r["changed_elements_prev"] for r in rows] == [1, 2]
    assert rows[1]["max_tensor"] in (UP, HEAD) and rows[1]["checkpoint_nonfinite"] == 0
    assert rows[1]["checkpoint_sha256"] == sha256_path(s4)
    assert set(read_provenance(summary)["inputs"]) == set(map(str, outs))
