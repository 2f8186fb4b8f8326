"""The stop study's rules through Snakemake on a fake evaluation of scripted episodes: the
protocol is frozen, every checkpoint graded in the docker sandbox, policies fitted and evaluated,
the gate applied once and the paper's section written; each fixed policy's numbers in
``results/stop/eval.json`` agree with a direct recount from ``checkpoints.parquet``; changing the
protocol after the sealed labels were read makes the rule fail naming the seal, and re-grades
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from checkout import copy_sources
from stop_fake_eval import write_fake_eval

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SNAKEFILE = """\
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/stop.smk"


rule all:
    input:
        PLAN.stop_targets,
"""


def smk(root: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--nolock", *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=900)


def job_counts(output: str) -> dict[str, int]:
    import re

    counts: dict[str, int] = {}
    block = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)\s*$", line)
        if not m:
            break
        if m[1] != "total":
            counts[m[1]] = int(m[2])
    return counts


@pytest.fixture(scope="module")
def built(tmp_path_factory, docker_sandbox):
    root = tmp_path_factory.mktemp("stop")
    copy_sources(("rules", "scripts", "config", "envs"), root)
    (root / "Snakefile").write_text(SNAKEFILE)
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    cfg["evaluation"].update(
        models=["base"],
        evalsets={
            "holdout": {"suite": "toy", "splits": ["holdout"], "samples": 2},
            "broad": {"suite": "toy", "splits": ["dev", "train"], "samples": 2},
        },
    )
    cfg["stop"].update(models=["base"])
    (root / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    write_fake_eval(root, docker_sandbox)
    proc = smk(root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return root, proc


def _recount(rows, splits, rule):
    by_traj = {}
    for r in rows:
        if r["split"] in splits:
            by_traj.setdefault(r["rollout_key"], []).append(r)
    per_task = {}
    for pts in by_traj.values():
        pts.sort(key=lambda r: r["point"])
        stop = next(p for p in pts if rule(p) or p["is_end"])
        per_task.setdefault(stop["instance_id"], []).append(
            (int(stop["correct_now"] == 1), stop["tokens_so_far"])
        )
    n = len(per_task)
    success = sum(sum(s for s, _ in v) / len(v) for v in per_task.values()) / n
    tokens = sum(sum(t for _, t in v) / len(v) for v in per_task.values()) / n
    return success, tokens


FIXED = {
    "agent_submit": lambda p: p["is_end"],
    "first_edit": lambda p: p["edits_so_far"] >= 1,
    "after_2_edits": lambda p: p["edits_so_far"] >= 2,
    "visible_pass": lambda p: (
        p["run_after_last_edit"] == 1 and p["run_failed"] == 0 and p["run_passed"] > 0
    ),
}


def test_the_study_runs_and_each_fixed_policy_agrees_with_a_direct_recount(built):
    root, proc = built
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts == {
        "freeze_protocol": 1,
        "stop_checkpoints": 1,
        "stop_policies": 1,
        "stop_eval": 1,
        "stop_report": 1,
        "all": 1,
    }
    rows = pq.read_table(root / "results/stop/base/checkpoints.parquet").to_pylist()
    receipt = json.loads((root / "results/stop/base/checkpoints.json").read_text())
    trees = {(r["instance_id"], r["tree_sha256"]) for r in rows}
    assert receipt["distinct_trees"] == len(trees) < len(rows)
    assert receipt["budget"]["spent"]["gradings"] == len(trees)  # each tree graded once
    assert {r["correct_now"] for r in rows} == {0, 1}
    result = json.loads((root / "results/stop/eval.json").read_text())
    for name, rule in FIXED.items():
        for split, names in (("fit", {"dev", "train"}), ("sealed", {"holdout"})):
            success, tokens = _recount(rows, names, rule)
            assert result[split][name]["success"] == pytest.approx(success), (name, split)
            assert result[split][name]["tokens"] == pytest.approx(tokens), (name, split)
    assert result["gate"]["verdict"] in ("pass", "fail")
    seal = json.loads((root / "logs/seals/stop.json").read_text())
    assert seal["protocol_sha256"] == result["protocol_sha256"]
    section = (root / "paper/tables/stop_section.tex").read_text()
    assert result["protocol_sha256"][:16] in section
    assert result["gate"]["verdict"] in section
    assert (root / "paper/figures/stop_curve.png").stat().st_size > 10_000


def test_changing_the_protocol_after_the_sealed_read_fails_naming_the_seal(built):
    root, _ = built
    protocol = root / "config/protocols/stop.yaml"
    original = protocol.read_text()
    protocol.write_text(original.replace("max_cost_ratio: 0.9", "max_cost_ratio: 0.8"))
    try:
        dry = smk(root, "-n")
        assert job_counts(dry.stdout + dry.stderr).get("stop_checkpoints", 0) == 0
        proc = smk(root)
    finally:
        protocol.write_text(original)
    assert proc.returncode != 0
    log = (root / "logs/freeze_protocol/stop.log").read_text()
    assert "logs/seals/stop.json" in log and "refused" in log
    assert "logs/seals/stop.json" in proc.stdout + proc.stderr or "freeze_protocol" in proc.stderr
