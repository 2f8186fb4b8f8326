"""training.keep_checkpoints through Snakemake: with segment_steps 1, endpoint 3 and
keep_checkpoints 2, rule prune_segment removes step 1's model and optimiser once step 2 and the
audits that read step 1 exist, keeps steps 2 (every 2nd) and 3 (the endpoint), and afterwards the
DAG has nothing to do: every segment still counts as built.

The training rule is in the DAG but its segments are made here (their files by hand, their
Snakemake timestamps by ``--touch``): the real rule trains in docker, which this test does not
need.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from checkout import copy_sources
from safetensors.numpy import save_file

from editcredit.io.identity import write_identity

pytestmark = pytest.mark.slow

SNAKEFILE = """\
from pathlib import Path

from editcredit.config import validate_config


configfile: "config/config.yaml"


validate_config(config, Path(workflow.basedir, "config/schema.yaml"))


include: "rules/common.smk"
include: "rules/train.smk"
include: "rules/audit.smk"
include: "rules/storage.smk"


rule all:
    input:
        PLAN.endpoint_segments,
        PLAN.pruned_records,
        "results/audits/summary.parquet",
"""


def smk(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--nolock", *args]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=300)


def _model(d: Path, tensors: dict[str, np.ndarray]) -> None:
    d.mkdir(parents=True)
    save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
    (d / "config.json").write_text('{"model_type": "toy"}\n')


def _segment(workdir: Path, step: int, tensors: dict[str, np.ndarray]) -> Path:
    d = workdir / "runs" / "O-s1" / f"step_{step}"
    _model(d / "model", tensors)
    (d / "state").mkdir()
    (d / "state" / "optimizer.pt").write_bytes(b"moments" * 64)
    (d / "state" / "rng.json").write_text("{}")
    (d / "state" / "cursor.json").write_text("{}")
    (d / "segment.json").write_text(json.dumps({"run": "O-s1", "steps": [step, step]}))
    write_identity(d, {"run": "O-s1", "step": step})
    return d


def _protect(path: Path) -> None:
    """What Snakemake's protected() leaves: every file and directory read-only."""
    for p in [*path.rglob("*"), path]:
        os.chmod(p, stat.S_IMODE(p.lstat().st_mode) & ~0o222)


@pytest.fixture
def workdir(tmp_path):
    copy_sources(("rules", "scripts", "config", "envs"), tmp_path)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    cfg = yaml.safe_load((tmp_path / "config/config.yaml").read_text())
    cfg["training"].update(plan={"O": [1]}, endpoint_step=3, segment_steps=1, keep_checkpoints=2)
    cfg["evaluation"]["diagnostic_every"] = 0  # no evaluated checkpoint: keep_checkpoints decides
    (tmp_path / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    for rel in (
        "data/frozen/minibugs/tasks.parquet",
        "results/controls/minibugs/summary.json",
        "results/training/pool.json",
        "results/training/pool_screen.parquet",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("made by hand\n")
    (tmp_path / "results/controls/minibugs/tasks").mkdir()  # the control rule's records
    rng = np.random.default_rng(0)
    tensors = {
        "embed.weight": rng.standard_normal((32, 8)).astype(np.float32),
        "norm.weight": np.ones(8, np.float32),
    }
    _model(tmp_path / "models/base/tiny", tensors)
    write_identity(tmp_path / "models/base/tiny", {})
    for step in (1, 2, 3):
        tensors = {k: v.copy() for k, v in tensors.items()}
        tensors["embed.weight"][step] += 0.01
        _segment(tmp_path, step, tensors)
    touched = smk(tmp_path, "--touch", "--forcerun", "train_segment", "runs/O-s1/step_3")
    assert touched.returncode == 0, touched.stderr[-3000:]
    for step in (1, 2, 3):
        assert (tmp_path / f"runs/O-s1/step_{step}/.snakemake_timestamp").is_file()
        _protect(tmp_path / f"runs/O-s1/step_{step}")
    return tmp_path


def _jobs(dry: subprocess.CompletedProcess) -> dict[str, int]:
    """Job counts of a dry run's table (rule name -> count)."""
    counts, table = {}, False
    for line in dry.stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            table = True
        elif table and len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
        elif table and parts and parts[0] == "total":
            break
    return counts


def test_retention_prunes_one_segment_and_leaves_nothing_to_do(workdir):
    dry = smk(workdir, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert _jobs(dry) == {"audit_params": 3, "audit_summary": 1, "prune_segment": 1, "all": 1}
    assert "runs/O-s1/pruned/step_1.json" in dry.stdout
    assert "pruned/step_2" not in dry.stdout and "pruned/step_3" not in dry.stdout

    run = smk(workdir)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    one = workdir / "runs/O-s1/step_1"
    assert not (one / "model/model.safetensors").exists()
    assert not (one / "state/optimizer.pt").exists()
    for kept in ("identity.json", "segment.json", "model/config.json", "state/cursor.json"):
        assert (one / kept).is_file(), kept
    for step in (2, 3):  # every 2nd segment and the endpoint keep their files
        assert (workdir / f"runs/O-s1/step_{step}/model/model.safetensors").is_file()
        assert (workdir / f"runs/O-s1/step_{step}/state/optimizer.pt").is_file()
    record = json.loads((workdir / "runs/O-s1/pruned/step_1.json").read_text())
    assert [r["path"] for r in record["removed"]] == [
        "model/model.safetensors",
        "state/optimizer.pt",
    ]
    identity = json.loads((one / "identity.json").read_text())["files"]
    assert all(identity[r["path"]] == r["sha256"] for r in record["removed"])
    assert record["keep_checkpoints"] == 2 and record["next_segment"] == "runs/O-s1/step_2"

    again = smk(workdir, "-n")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout
    # a target through the pruned segment is up to date too
    end = smk(workdir, "-n", "runs/O-s1/step_3", "results/audits/O-s1/step_2.json")
    assert "Nothing to be done" in end.stdout + end.stderr, end.stdout

    # a new k prunes what it newly drops and redoes nothing: not step 1's prune, no training
    cfg = yaml.safe_load((workdir / "config/config.yaml").read_text())
    cfg["training"]["keep_checkpoints"] = 3
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    three = smk(workdir, "-n")
    assert three.returncode == 0, three.stderr[-3000:]
    assert _jobs(three) == {"prune_segment": 1, "all": 1}, three.stdout
    assert "runs/O-s1/pruned/step_2.json" in three.stdout
    assert "output: runs/O-s1/pruned/step_1.json" not in three.stdout


def test_keep_all_asks_for_no_pruning(workdir):
    cfg = yaml.safe_load((workdir / "config/config.yaml").read_text())
    cfg["training"]["keep_checkpoints"] = 0
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    dry = smk(workdir, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "prune_segment" not in _jobs(dry) and "train_segment" not in _jobs(dry)
