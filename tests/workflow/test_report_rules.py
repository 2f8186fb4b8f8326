"""Statistics and paper rules through Snakemake, on a fake results tree (no training, no eval).

A scratch Snakefile includes the repository's rules/common.smk, stats.smk and report.smk; the
upstream outputs (controls, eval slots, training segments, audits, benchmarks) are written by
tests/report/fake_results.py. The workflow builds the paper; then changing only the claim-gate
threshold must rerun only the gate (compare), the tables and the paper, nothing upstream.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout import copy_sources

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from fake_results import FakeSpec, fake_manifest_sha256, write_fake_tree  # noqa: E402

SNAKEFILE = """\
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/stats.smk"
include: "rules/report.smk"


rule all:
    input:
        TARGETS,
"""
HAS_TEX = shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None


def smk(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--nolock", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run: rule -> jobs."""
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
def built(tmp_path_factory):
    """A fake upstream tree plus the stats and report rules, run once to the paper."""
    root = tmp_path_factory.mktemp("paper")
    copy_sources(("rules", "scripts", "config", "envs", "paper"), root)
    targets = '"paper/main.pdf"' if HAS_TEX else "paper_tables()"
    (root / "Snakefile").write_text(SNAKEFILE.replace("TARGETS", targets))
    cfg_text = (root / "config" / "config.yaml").read_text()  # no stop study in this scratch
    (root / "config" / "config.yaml").write_text(
        cfg_text.replace("stop:\n  enabled: true", "stop:\n  enabled: false")
    )
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    evalsets = cfg["evaluation"]["evalsets"]
    write_fake_tree(
        root,
        FakeSpec(
            plan=cfg["training"]["plan"],
            n_samples=evalsets["holdout"]["samples"],
            extra_evalsets={e: v["samples"] for e, v in evalsets.items() if e != "holdout"},
            endpoint_step=cfg["training"]["endpoint_step"],
            segment_steps=cfg["training"]["segment_steps"],
        ),
    )
    cfg_text = (root / "config" / "config.yaml").read_text()  # the fake suite's manifest pin
    pin = cfg["suites"]["minibugs"]["manifest_sha256"]
    (root / "config" / "config.yaml").write_text(cfg_text.replace(pin, fake_manifest_sha256(root)))
    proc = smk(root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return root, proc


def test_workflow_writes_stats_tables_figures_and_paper(built):
    root, proc = built
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts["compare"] == counts["paired"] == 8
    names = (
        "M-B",
        "O-base",
        "M-O",
        "M42-E42",
        "O-base-broad",
        "M-B-broad",
        "M-O-broad",
        "M42-E42-broad",
    )
    for name in names:
        rec = json.loads((root / "results" / "stats" / f"{name}.json").read_text())
        assert rec["gate"]["verdict"] in ("pass", "fail")
        assert rec["provenance"]["inputs"]
    single = json.loads((root / "results" / "stats" / "M42-E42.json").read_text())
    assert single["kind"] == "single-seed contrast" and single["label"] == "M42 - E42"
    broad = json.loads((root / "results" / "stats" / "M-B-broad.json").read_text())
    assert broad["evalset"] == "broad" and broad["all"]["half_width"] > 0
    for part in ("trained", "untrained"):  # the fake runs trained on 6 of the set's tasks
        assert broad[part]["comparison"]["half_width"] > 0, part
    assert broad["trained"]["n_tasks"] == 6
    trained = (root / "paper" / "tables" / "trained.tex").read_text()
    assert "broad & trained & 42: 6, 314159: 6 &" in trained
    assert (
        # the base and 7 endpoints on 2 eval sets, and each run's step 4 on the holdout set
        "Every slot of the 23 evaluated (model, eval set) slices was decided"
        in (root / "paper" / "tables" / "unresolved.tex").read_text()
    )
    for tex in (root / "paper" / "tables").glob("*.tex"):
        assert tex.read_text().startswith("% editcredit-provenance: {")
    o_base = json.loads((root / "results" / "stats" / "O-base.json").read_text())
    assert o_base["label"] == "O - base" and o_base["all"]["half_width"] > 0
    for name in ("training_curves", "holdout_curve", "task_differences", "bootstrap"):
        assert (root / "paper" / "figures" / f"{name}.png").stat().st_size > 10_000
    if HAS_TEX:
        assert (root / "paper" / "main.pdf").read_bytes().startswith(b"%PDF")
    assert "claim gate M - B:" in (root / "logs" / "compare" / "M-B.log").read_text()
    costs = (root / "paper" / "tables" / "costs.tex").read_text()
    assert r"Run: spent / budget" in costs  # each run's spend beside its declared budget
    assert r"M-s42 & 8\,000 / 1\,000\,000 & 400 / 20\,000" in costs


def test_the_credit_against_the_truth_is_computed_and_tabled(built):
    """rule credit_truth reads the ledgers of B and M against their segments' truth rows (the
    fake tree labels each rollout's one block ``fix`` when it resolved its task): a result
    file and the paper's table beside the credit diagnostics."""
    root, proc = built
    assert job_counts(proc.stdout + proc.stderr)["credit_truth"] == 1
    record = json.loads((root / "results" / "stats" / "credit_truth.json").read_text())
    assert list(record["arms"]) == ["B", "M"]
    for arm, result in record["arms"].items():
        assert result["runs"] == [f"{arm}-s314159", f"{arm}-s42"]
        assert result["unlabelled"] == 0 and result["table"]["harmful"] == dict.fromkeys(
            ("negative", "zero", "positive"), 0
        )
        assert 0.0 <= result["agreement"] <= 1.0
    inputs = record["provenance"]["inputs"]
    assert any("runs/M-s42/step_" in p and p.endswith("/truth.parquet") for p in inputs)
    assert not any("/O-s" in p or "/E-s" in p for p in inputs)
    tex = (root / "paper" / "tables" / "credit_truth.tex").read_text()
    assert r"\label{tab:credit_truth}" in tex and "In arm B," in tex


def test_gate_threshold_change_reruns_only_gate_tables_and_paper(built):
    root, _ = built
    cfg_path = root / "config" / "config.yaml"
    original = cfg_path.read_text()
    assert "min_difference: 0.04" in original
    cfg_path.write_text(original.replace("min_difference: 0.04", "min_difference: 0.05"))
    try:
        proc = smk(root, "--dry-run")
    finally:
        cfg_path.write_text(original)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout + proc.stderr)
    expected = {"compare": 8, "render_tables": 1, "all": 1}
    if HAS_TEX:
        expected["paper"] = 1
    assert counts == expected, proc.stdout[-3000:]


def test_nothing_to_do_when_unchanged(built):
    root, _ = built
    proc = smk(root, "--dry-run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_snakemake_report_holds_the_figures_and_captions(built):
    root, _ = built
    proc = smk(root, "--report", "report.html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (root / "report.html").read_text(errors="replace")
    assert "training_curves.png" in html and "bootstrap.png" in html
    assert "Bootstrap distribution of the main comparison" in html


def test_verify_traces_a_changed_eval_slot_to_the_tables(built):
    """editcredit verify: the generated tree verifies; a changed slot file reaches the tables."""
    from editcredit.audit.verify import verify_tree

    root, _ = built
    report = verify_tree(root)
    assert report.ok, [(f.path, f.details) for f in report.findings]
    changed = "results/eval/M-s42/holdout/slots.parquet"
    original = (root / changed).read_bytes()
    try:
        (root / changed).write_bytes(original + b"\0")
        report = verify_tree(root)
    finally:
        (root / changed).write_bytes(original)
    assert [f.path for f in report.findings] == [changed]
    reached = report.graph.downstream(changed)
    assert {"paper/tables/comparisons.tex", "paper/tables/scores.tex"} <= set(reached)
    assert "paper/tables/unresolved.tex" in reached  # a direct input of the appendix table
