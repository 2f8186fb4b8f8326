"""Rule replay through Snakemake on a real stored segment: the rule passes, and an edited stored
status fails it, leaving its failure record (both reports) and no summary."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from checkout import copy_sources

from editcredit.rl.records import ROLLOUT_SCHEMA

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SNAKEFILE = """\
from pathlib import Path

from editcredit.config import validate_config


configfile: "config/config.yaml"


validate_config(config, Path(workflow.basedir, "config/schema.yaml"))


include: "rules/common.smk"
include: "rules/replay.smk"


rule all:
    input:
        layout.REPLAY_SUMMARY,
"""
# one run of one one-step segment: the study's segment; every replayable grading re-graded
PLAN = "  plan:\n    O: [42, 314159]\n    B: [42, 314159]\n    M: [42, 314159]\n    E: [42]\n"
LAYER = """\
training:
  endpoint_step: 1
  segment_steps: 1
replay:
  fraction: 1.0
  minimum: 0
"""


def _scratch(root: Path, study: dict) -> Path:
    copy_sources(("rules", "scripts", "config", "envs"), root)
    (root / "Snakefile").write_text(SNAKEFILE)
    (root / "layer.yaml").write_text(LAYER)
    config = root / "config" / "config.yaml"
    text = config.read_text()
    assert text.count(PLAN) == 1  # a layer's mapping is merged into the plan, never replaces it
    config.write_text(text.replace(PLAN, "  plan:\n    B: [42]\n"))
    shutil.copytree(study["segment"], root / "runs" / "B-s42" / "step_1")
    frozen = root / "data" / "frozen" / "minibugs"
    frozen.mkdir(parents=True)
    shutil.copy(study["tasks"], frozen / "tasks.parquet")
    return root


def _smk(root: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--nolock"]
    cmd += ["--configfile", "layer.yaml"]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=900)


def test_the_rule_passes_on_the_stored_gradings(study, tmp_path):
    root = _scratch(tmp_path, study)
    proc = _smk(root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    summary = json.loads((root / "results" / "replay" / "summary.json").read_text())
    assert summary["sampled"] == summary["replayable"] == summary["identical"] > 0
    assert summary["provenance"]["inputs"]  # the segment and the tasks, hashed
    assert "re-graded stored gradings identical" in (root / "logs" / "replay.log").read_text()


def test_an_edited_stored_status_fails_the_rule_with_its_failure_record(study, tmp_path):
    root = _scratch(tmp_path, study)
    path = root / "runs" / "B-s42" / "step_1" / "rollouts.parquet"
    rows = pq.read_table(path).to_pylist()
    index = next(
        i
        for i, row in enumerate(rows)
        if json.loads(row["report"]).get("tests", {}).get("test_calc.py::test_mul")
    )
    report = json.loads(rows[index]["report"])
    report["tests"]["test_calc.py::test_mul"]["status"] = "skipped"
    rows[index]["report"] = json.dumps(report, sort_keys=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=ROLLOUT_SCHEMA), path)
    proc = _smk(root)
    assert proc.returncode != 0
    assert not (root / "results" / "replay" / "summary.json").exists()
    log = (root / "logs" / "replay.log").read_text()
    assert f"final:{rows[index]['rollout_key']}" in log
    assert "test test_calc.py::test_mul: skipped -> passed" in log
    (record_path,) = (root / "logs" / "replay.attempts").glob("*.failed.json")
    record = json.loads(record_path.read_text())
    assert record["error_type"] == "ReplayMismatch"
    (mismatch,) = record["record"]["mismatches"]
    assert mismatch["stored"]["tests"]["test_calc.py::test_mul"]["status"] == "skipped"
    assert mismatch["replayed"]["tests"]["test_calc.py::test_mul"]["status"] == "passed"
