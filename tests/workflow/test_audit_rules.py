"""Rules audit_params and audit_summary through Snakemake, on hand-made checkpoints.

The training rule is left out (a scratch Snakefile includes only ``rules/common.smk`` and
``rules/audit.smk``), so the ``runs/`` directories made here are plain source files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from checkout import copy_sources
from safetensors.numpy import save_file

from editcredit.audit.param_audit import EQUALS_BASE
from editcredit.audit.verify import verify_tree
from editcredit.io.identity import write_identity
from editcredit.io.provenance import read_provenance

SNAKEFILE = """\
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/audit.smk"


rule all:
    input:
        "results/audits/summary.parquet",
"""


def smk(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--nolock", *args]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=300)


def _model(d: Path, tensors: dict[str, np.ndarray]) -> None:
    d.mkdir(parents=True)
    save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
    (d / "config.json").write_text('{"model_type": "toy"}\n')


def _step(workdir: Path, run: str, step: int, tensors: dict[str, np.ndarray]) -> None:
    d = workdir / "runs" / run / f"step_{step}"
    _model(d / "model", tensors)
    write_identity(d, {"run": run, "step": step})


@pytest.fixture
def workdir(tmp_path):
    copy_sources(("rules/common.smk", "rules/audit.smk", "scripts", "config", "envs"), tmp_path)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    cfg = yaml.safe_load((tmp_path / "config/config.yaml").read_text())
    cfg["training"].update(plan={"M": [1], "O": [1]}, endpoint_step=4, segment_steps=2)
    (tmp_path / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    rng = np.random.default_rng(0)
    base = {
        "embed.weight": rng.standard_normal((32, 8)).astype(np.float32),
        "layer.weight": rng.standard_normal((8, 8)).astype(np.float32),
        "norm.weight": np.ones(8, np.float32),
    }
    _model(tmp_path / "models/base/tiny", base)
    write_identity(tmp_path / "models/base/tiny", {})
    s2 = {k: v.copy() for k, v in base.items()}
    s2["layer.weight"][0] += 0.01
    s4 = {k: v.copy() for k, v in s2.items()}
    s4["embed.weight"][3] -= 0.02
    _step(tmp_path, "M-s1", 2, s2)
    _step(tmp_path, "M-s1", 4, s4)
    _step(tmp_path, "O-s1", 2, s2)
    _step(tmp_path, "O-s1", 4, base)  # the endpoint fell back to the base: must fail
    return tmp_path


def test_audits_and_summary_are_written_with_provenance(workdir):
    proc = smk(workdir, "results/audits/M-s1/step_2.json", "results/audits/M-s1/step_4.json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    end = json.loads((workdir / "results/audits/M-s1/step_4.json").read_text())
    assert end["ok"] and end["endpoint"] and end["checkpoint_nonfinite"] == 0
    assert end["vs_base"]["changed_tensors"] == 2 and end["vs_base"]["changed_elements"] == 16
    assert end["vs_previous"]["changed_tensors"] == 1
    assert end["checkpoint"] == "runs/M-s1/step_4/model"
    assert end["previous"] == "runs/M-s1/step_2/model" and end["base"] == "models/base/tiny"
    assert set(end["provenance"]["inputs"]) == {
        "runs/M-s1/step_4/model",
        "runs/M-s1/step_2/model",
        "models/base/tiny",
    }
    first = json.loads((workdir / "results/audits/M-s1/step_2.json").read_text())
    assert first["previous"] == "models/base/tiny"
    assert (workdir / "results/benchmarks/audit_params/M-s1/step_4.tsv").is_file()
    assert (workdir / "logs/audit_params/M-s1/step_4.log").is_file()


def test_endpoint_equal_to_base_fails_the_rule_and_blocks_the_summary(workdir):
    proc = smk(workdir, "--keep-going")
    assert proc.returncode != 0
    log = (workdir / "logs/audit_params/O-s1/step_4.log").read_text()
    assert EQUALS_BASE in log and "runs/O-s1/step_4/model" in log
    assert not (workdir / "results/audits/O-s1/step_4.json").exists()
    assert not (workdir / "results/audits/summary.parquet").exists()
    assert (workdir / "results/audits/O-s1/step_2.json").is_file()  # the others still ran


def _step_changed(workdir: Path) -> None:
    """Replace O-s1's endpoint (equal to the base) by one that changed."""
    shutil.rmtree(workdir / "runs/O-s1/step_4/model")
    (workdir / "runs/O-s1/step_4/identity.json").unlink()
    s4 = {
        "embed.weight": np.zeros((32, 8), np.float32),
        "layer.weight": np.eye(8, dtype=np.float32),
    }
    s4["norm.weight"] = np.full(8, 2.0, np.float32)
    _step(workdir, "O-s1", 4, s4)


def test_summary_of_every_run(workdir):
    _step_changed(workdir)
    proc = smk(workdir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    path = workdir / "results/audits/summary.parquet"
    rows = pq.read_table(path).to_pylist()
    assert [(r["run"], r["step"]) for r in rows] == [
        ("M-s1", 2),
        ("M-s1", 4),
        ("O-s1", 2),
        ("O-s1", 4),
    ]
    assert all(r["ok"] and r["checkpoint_nonfinite"] == 0 for r in rows)
    assert all(r["changed_tensors"] > 0 for r in rows if r["endpoint"])
    assert len(read_provenance(path)["inputs"]) == 4


def test_a_rerun_of_a_failed_audit_keeps_the_first_failure(workdir):
    target = "results/audits/O-s1/step_4.json"
    log = workdir / "logs/audit_params/O-s1/step_4.log"
    kept = workdir / "logs/audit_params/O-s1/step_4.attempts"
    assert smk(workdir, target).returncode != 0
    [record] = kept.glob("*.failed.json")
    first_record = record.read_bytes()
    failure = json.loads(first_record)
    assert failure["error_type"] == "AuditFailed" and EQUALS_BASE in failure["error"]
    audit = failure["record"]  # the audit the failed job could not write as its output
    assert audit["ok"] is False and audit["run"] == "O-s1" and audit["step"] == 4
    assert audit["checkpoint"] == "runs/O-s1/step_4/model" and audit["failures"]
    first_log = (kept / f"{failure['attempt']}.log").read_text()
    assert log.read_text() == first_log and EQUALS_BASE in first_log

    _step_changed(workdir)  # the rerun passes
    proc = smk(workdir, target)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert EQUALS_BASE not in log.read_text()  # Snakemake's log: the latest attempt only
    assert (kept / f"{failure['attempt']}.log").read_text() == first_log
    assert record.read_bytes() == first_record
    assert list(kept.glob("*.failed.json")) == [record] and len(list(kept.glob("*.log"))) == 2


def test_verify_finds_the_config_each_audit_recorded_is_the_current_one(workdir):
    proc = smk(workdir, "results/audits/M-s1/step_2.json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not [d for d in verify_tree(workdir).drift if d.kind == "config"]
    cfg = yaml.safe_load((workdir / "config/config.yaml").read_text())
    cfg["audit"]["chunk_mib"] += 1  # the config changes after the audit was built
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    drift = [d for d in verify_tree(workdir).drift if d.kind == "config"]
    assert [d.paths for d in drift] == [["results/audits/M-s1/step_2.json"]]
