"""train_segment through Snakemake on a toy suite: the segment chain from freezing to step_4,
and a segment killed mid-way (a crash, not a clean stop) is redone alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from checkout import copy_sources
from policyfactory import train_toy_policy, write_toy_jsonl

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "2", "--nolock"]
FILES = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")


def _config(policy: Path, suite_file: Path) -> str:
    return f"""
suites:
  toy:
    generator: swebench
    source: {suite_file}
    seed: 0
    splits: {{train: 1.0, dev: 0.0, holdout: 0.0}}
models:
  toyp:
    source: import
    path: {policy}
agent:
  max_turns: 3
  max_new_tokens: 24
training:
  model: toyp
  suite: toy
  plan: {{M: [42]}}
  endpoint_step: 4
  segment_steps: 2
  ray: {{enabled: false, address: "", num_workers: 1}}
  grpo:
    tasks_per_step: 2
    group_size: 3
    micro_batch_size: 4
    # at 0.01 the toy M run collapses after two updates (every action unparsable, no credit at
    # update 3) and the early update gate stops it; at 0.001 it stays healthy
    lr: 0.001
"""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, docker_sandbox):
    root = tmp_path_factory.mktemp("wf")
    copy_sources(FILES, root)
    policy = train_toy_policy(tmp_path_factory.mktemp("policy") / "model", docker_sandbox)
    suite = write_toy_jsonl(root / "toy.jsonl")
    (root / "extra.yaml").write_text(_config(policy, suite))
    return root


def _smk(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*SNAKEMAKE, *args, "--configfile", "extra.yaml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_killed_segment_is_redone_alone(workdir):
    target = "runs/M-s42/step_4"
    log = workdir / "logs" / "train_segment" / "M-s42" / "step_4.log"
    proc = subprocess.Popen(
        [*SNAKEMAKE, target, "--configfile", "extra.yaml"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 480
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and "M-s42: steps 3..4" in log.read_text():
            break  # the second segment has started and has two steps of work ahead
        time.sleep(0.05)
    assert proc.poll() is None, "the segment finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # a crash: no clean-up by Snakemake
    proc.wait()
    first = workdir / "runs" / "M-s42" / "step_2"
    assert (first / "model" / "model.safetensors").is_file()
    assert not (workdir / target).exists()
    stamp = (first / "model" / "model.safetensors").stat().st_mtime_ns

    dry = _smk(workdir, target, "-n")
    assert dry.returncode == 0, dry.stderr
    jobs = [line.split() for line in dry.stdout.splitlines() if line.startswith("train_segment")]
    assert jobs and all(j == ["train_segment", "1"] for j in jobs), dry.stdout  # job stats
    assert "runs/M-s42/step_4" in dry.stdout and "output: runs/M-s42/step_2" not in dry.stdout

    done = _smk(workdir, target)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (first / "model" / "model.safetensors").stat().st_mtime_ns == stamp
    metrics = pd.read_parquet(workdir / target / "metrics.parquet")
    assert metrics["step"].tolist() == [3, 4]
    ledger = pd.read_parquet(workdir / target / "credit.parquet")
    assert set(ledger["run"]) <= {"M-s42"}
    # the killed attempt's log outlives the rerun, which Snakemake starts by removing the log
    kept = sorted(log.with_name("step_4.attempts").glob("*.log"), key=lambda p: p.stat().st_mtime)
    assert len(kept) == 2, kept
    killed, rerun = (p.read_text() for p in kept)
    assert "M-s42: steps 3..4" in killed and " ok\n" not in killed.splitlines(True)[-1]
    assert rerun.endswith(" ok\n") and log.read_text() == rerun
