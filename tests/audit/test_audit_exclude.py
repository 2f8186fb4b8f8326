"""Declared audit exclusions (config ``audit.exclude``): a language-only export of a
multimodal base is audited on the shared tensors, the vision tensors listed with the reason."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from editcredit.audit.audit_report import Exclusion
from editcredit.audit.jobs import AuditFailed, audit_params_job, declared_exclusions, summary_row
from editcredit.audit.param_audit import audit_checkpoint, exclusions

VISION = "the export keeps the language model only; the vision tower is not trained"


def _language() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "model.embed.weight": rng.standard_normal((16, 8)).astype(np.float32),
        "model.layers.0.weight": rng.standard_normal((8, 8)).astype(np.float32),
    }


def _vision() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(4)
    return {
        "model.vision_tower.patch.weight": rng.standard_normal((4, 4)).astype(np.float32),
        "model.vision_tower.norm.weight": rng.standard_normal(4).astype(np.float32),
        "model.projector.weight": rng.standard_normal((4, 8)).astype(np.float32),
    }


def _save(tmp_path, name, tensors):
    d = tmp_path / name
    d.mkdir()
    save_file(tensors, str(d / "model.safetensors"))
    return d


@pytest.fixture
def multimodal(tmp_path):
    """A multimodal base and a trained language-only export of it (one tensor moved)."""
    base = _save(tmp_path, "base", {**_language(), **_vision()})
    trained = _language()
    trained["model.layers.0.weight"][1, 2] += 0.5
    return base, _save(tmp_path, "ckpt", trained)


@pytest.mark.parametrize(
    ("declared", "names", "taken"),
    [
        ([], ["a", "b"], {}),
        ([("v.*", "r")], ["v.x", "w.y", "v.z"], {"v.*": ("v.x", "v.z")}),
        ([("v.*", "r"), ("*.x", "s")], ["v.x", "w.x"], {"v.*": ("v.x",), "*.x": ("w.x",)}),
        ([("q.*", "r")], ["v.x"], {"q.*": ()}),
        ([("v.?", "r")], ["v.x", "v.xy", "v.x"], {"v.?": ("v.x",)}),
    ],
)
def test_exclusions_take_each_name_once_by_first_pattern(declared, names, taken):
    got = exclusions(declared, names)
    assert {e.pattern: e.keys for e in got} == taken
    assert [e.reason for e in got] == [r for _, r in declared]


def test_without_the_declaration_the_vision_keys_fail_the_audit(multimodal):
    base, ckpt = multimodal
    report = audit_checkpoint(ckpt, base)
    assert not report.ok
    assert "model.vision_tower.patch.weight" in report.failures[0]


def test_declared_exclusions_audit_the_shared_tensors_and_list_the_rest(multimodal):
    base, ckpt = multimodal
    declared = [("model.vision_tower.*", VISION), ("model.projector.*", VISION), ("x.*", "none")]
    report = audit_checkpoint(ckpt, base, exclude=declared)
    assert report.ok, report.failures
    assert report.vs_base.compared_tensors == 2 and report.vs_base.changed_tensors == 1
    assert report.vs_base.missing_keys == ()
    assert report.excluded[0] == Exclusion(
        "model.vision_tower.*",
        VISION,
        ("model.vision_tower.norm.weight", "model.vision_tower.patch.weight"),
    )
    assert report.excluded[1].keys == ("model.projector.weight",)
    assert "audit.exclude 'x.*' matched no tensor" in report.notes


def test_an_exclusion_does_not_hide_a_missing_shared_tensor(multimodal, tmp_path):
    base, _ = multimodal
    ckpt = _save(tmp_path, "partial", {"model.embed.weight": _language()["model.embed.weight"]})
    report = audit_checkpoint(ckpt, base, exclude=[("model.vision_tower.*", VISION)])
    assert any("model.layers.0.weight" in f for f in report.failures)


def test_the_audit_job_records_the_exclusions(multimodal, tmp_path):
    base, ckpt = multimodal
    cfg = {"chunk_mib": 1, "exclude": [{"pattern": "model.vision_tower.*", "reason": VISION}]}
    assert declared_exclusions(cfg) == [("model.vision_tower.*", VISION)]
    assert declared_exclusions({"chunk_mib": 1}) == []
    with pytest.raises(AuditFailed, match="model.projector.weight"):
        audit_params_job(ckpt, base, None, tmp_path / "a.json", "M-s1", 2, 2, cfg, {})
    cfg["exclude"].append({"pattern": "model.projector.*", "reason": VISION})
    out = tmp_path / "b.json"
    audit_params_job(ckpt, base, None, out, "M-s1", 2, 2, cfg, {})
    body = json.loads(out.read_text())
    assert [e["pattern"] for e in body["excluded"]] == ["model.vision_tower.*", "model.projector.*"]
    assert body["excluded"][0]["reason"] == VISION
    assert summary_row(body, str(out))["excluded_keys"] == 3
