"""The workflow through Snakemake itself: lint, dry-run, config validation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout import copy_sources
from taskfactory import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def smk(*args: str, cwd: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def workdir(tmp_path):
    """A copy of the workflow's sources in an empty directory (no outputs yet, whatever the
    checkout holds: a pipeline run's tables, results and models stay behind)."""
    names = (
        "Snakefile",
        "rules",
        "scripts",
        "config",
        "profiles",
        "envs",
        "src",
        "requirements",
        "paper",
    )
    return copy_sources(names, tmp_path)


def test_lint_is_clean(workdir):
    proc = smk("--lint", "--nolock", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


def test_dry_run_lists_the_pending_targets(workdir):
    proc = smk("-n", "--cores", "2", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    for rule in ("freeze_suite", "control", "all"):
        assert rule in out
    assert "data/frozen/minibugs/tasks.parquet" in out
    # the plan's storage forecast: one line; nothing is built yet (7 runs x 2 segments)
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("storage forecast:")]
    assert "14 segment checkpoint(s)" in line and line.endswith(": fits")


def test_the_multibug_suite_is_frozen_by_its_rule_from_the_pool_and_its_generator(workdir):
    target = "data/frozen/multibugs/tasks.parquet"
    proc = smk(
        "-n", "--cores", "1", target, "--configfile", "config/config.yaml",
        "config/presets/multibug-suite.yaml", cwd=workdir,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (inputs,) = [x for x in proc.stdout.splitlines() if x.strip().startswith("input:")]
    assert "src/editcredit/suites/multibugs.py" in inputs
    assert "src/editcredit/data/minibugs/pool/textops.py" in inputs


def test_a_plan_that_does_not_fit_the_free_space_stops_before_any_job(workdir):
    (workdir / "extra.yaml").write_text("training:\n  health:\n    min_free_disk_gb: 1.0e+9\n")
    proc = smk("--cores", "1", "--configfile", "extra.yaml", cwd=workdir)
    assert proc.returncode != 0
    err = proc.stdout + proc.stderr
    assert "StorageForecastError" in err and "GB short" in err and "DOES NOT FIT" in err
    assert "training.health.min_free_disk_gb" in err
    assert not (workdir / "data/frozen").exists() and not (workdir / "logs").exists()


def test_bad_config_value_names_the_field(workdir):
    cfg = workdir / "config" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("docker_mode: warm", "docker_mode: tepid"))
    proc = smk("-n", "--cores", "1", cwd=workdir)
    assert proc.returncode != 0
    assert "tepid" in proc.stdout + proc.stderr


def test_import_model_writes_an_identity_receipt(workdir, tmp_path_factory):
    import json

    from qwenfactory import write_stock_qwen2

    src = write_stock_qwen2(tmp_path_factory.mktemp("hf") / "qwen")
    extra = workdir / "extra.yaml"
    extra.write_text(f"models:\n  ext:\n    source: import\n    path: {src}\n")
    proc = smk("models/base/ext", "--cores", "1", "--configfile", str(extra), cwd=workdir)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    receipt = json.loads((workdir / "models/base/ext/identity.json").read_text())
    assert "model.safetensors" in receipt["files"]
    assert receipt["imported_from"] == str(src.resolve())
    # the study's progress, as ./dev.sh run prints it (the workflow profile keeps it on)
    assert "1 of 1 steps (100%) done" in proc.stdout + proc.stderr


@pytest.mark.parametrize("profile", sorted(Path(REPO, "profiles").glob("*/profile.yaml")))
def test_no_profile_silences_the_progress_of_the_study(profile):
    settings = yaml.safe_load(profile.read_text())
    assert not settings.get("quiet"), f"{profile}: quiet hides Snakemake's 'N of M steps' lines"


def test_misspelt_key_fails_the_dry_run_naming_its_path(workdir):
    """An unknown key stops the DAG at construction, not inside the first job that reads it."""
    extra = workdir / "typo.yaml"
    extra.write_text("training:\n  grpo:\n    credit_lamda: 0.1\n")
    proc = smk("-n", "--cores", "1", "--configfile", str(extra), cwd=workdir)
    assert proc.returncode != 0
    assert "training.grpo.credit_lamda" in proc.stdout + proc.stderr


def test_the_cost_table_reads_only_declared_benchmarks(workdir):
    """rule render_tables names every upstream job's benchmark file as an input (so a changed
    one re-renders the tables), and a leftover of an earlier plan is not among them."""
    leftover = workdir / "results" / "benchmarks" / "train_segment" / "Z-s1" / "step_2.tsv"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("s\th:m:s\n1.0\t0:00:01\n")
    proc = smk("-n", "--cores", "1", "paper/tables/costs.tex", cwd=workdir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    block = out.split("rule render_tables:", 1)[1].split("output:", 1)[0]
    for expected in (
        "results/benchmarks/train_segment/M-s42/step_4.tsv",
        "results/benchmarks/eval_model/base/holdout.tsv",
        "results/benchmarks/freeze_suite/minibugs.tsv",
        "results/benchmarks/compare/M-B.tsv",
        "results/benchmarks/replay.tsv",
        "results/replay/summary.json",  # the reproducibility section's replay check
    ):
        assert expected in block
    assert "Z-s1" not in block and "results/benchmarks/render_tables" not in block


def test_the_replay_check_reads_every_segment_of_every_run(workdir):
    """rule replay (in the default target through the paper) takes every segment of the plan,
    not only the endpoints, and the training suite's tasks."""
    proc = smk("-n", "--cores", "1", "results/replay/summary.json", cwd=workdir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    block = out.split("rule replay:", 1)[1].split("output:", 1)[0]
    runs = ["O-s42", "O-s314159", "B-s42", "B-s314159", "M-s42", "M-s314159", "E-s42"]
    training = yaml.safe_load((Path(REPO) / "config" / "config.yaml").read_text())["training"]
    k, end = training["segment_steps"], training["endpoint_step"]
    assert end > k  # the plan has segments before the endpoint
    for run in runs:
        for step in range(k, end + 1, k):
            assert f"runs/{run}/step_{step}" in block
    assert "data/frozen/minibugs/tasks.parquet" in block


def test_the_credit_truth_reads_every_segment_of_the_arms_that_query(workdir):
    """rule credit_truth (in the default target through the paper) takes every segment of the
    runs of B and M, whose ledgers it reads against their truth rows, and no other run's."""
    proc = smk("-n", "--cores", "1", "paper/main.pdf", cwd=workdir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    block = out.split("rule credit_truth:", 1)[1].split("jobid:", 1)[0]
    training = yaml.safe_load((Path(REPO) / "config" / "config.yaml").read_text())["training"]
    k, end = training["segment_steps"], training["endpoint_step"]
    for run in ("B-s42", "B-s314159", "M-s42", "M-s314159"):
        for step in range(k, end + 1, k):
            assert f"runs/{run}/step_{step}" in block
    assert "runs/O-s42" not in block and "runs/E-s42" not in block
    assert "output: results/stats/credit_truth.json, paper/tables/credit_truth.tex" in block
    paper = out.split("rule paper:", 1)[1].split("jobid:", 1)[0]
    assert "paper/tables/credit_truth.tex" in paper


def test_image_tasks_in_the_minibugs_environment_fail_the_dry_run(workdir):
    """The real-study preset plays image tasks; with agent.environment minibugs the DAG stops
    before any job, naming the setting and the suite; with its own 'bash' it builds."""
    presets = ["config/presets/full-study.yaml", "config/presets/real-study.yaml"]
    ok = smk("-n", "--cores", "1", "--configfile", *presets, cwd=workdir)
    assert "agent.environment" not in ok.stdout + ok.stderr
    layer = workdir / "minibugs-env.yaml"
    layer.write_text("agent:\n  environment: minibugs\n")
    proc = smk("-n", "--cores", "1", "--configfile", *presets, str(layer), cwd=workdir)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "agent.environment is 'minibugs'" in out and "suite swebench" in out
