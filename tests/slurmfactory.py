"""The toy study that the SLURM tests run, locally and through profiles/slurm: its config, a copy
of the workflow to run it in, Snakemake and sacct calls, and what of a segment must be equal."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml
from checkout import copy_sources
from taskfactory import REPO

FILES = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")


def study_config(policy: Path, suite_file: Path) -> dict:
    """The embedded default, cut down to a toy study that reaches the tables in a few minutes."""
    cfg = yaml.safe_load(Path(REPO, "config", "config.yaml").read_text())
    cfg["suites"] = {
        "toy": {
            "generator": "swebench",
            "source": str(suite_file),
            "seed": 0,
            "splits": {"train": 1.0, "dev": 0.0, "holdout": 0.0},
        }
    }
    cfg["models"] = {"toyp": {"source": "import", "path": str(policy)}}
    cfg["agent"].update(max_turns=3, max_new_tokens=24, candidates=False)  # as TOY_AGENT
    train = cfg["training"]
    train.update(model="toyp", suite="toy", plan={"M": [42], "B": [42]})
    train.update(endpoint_step=2, segment_steps=1)
    train["ray"].update(enabled=False, address="", num_workers=1)
    train["grpo"].update(tasks_per_step=2, group_size=2, micro_batch_size=4, lr=0.01)
    cfg["evaluation"]["evalsets"] = {
        "toy": {"suite": "toy", "splits": ["train"], "samples": 1, "max_tasks": 0}
    }
    cfg["stats"].update(evalsets=["toy"], main="M-B", comparisons={"M-B": {"a": "M", "b": "B"}})
    cfg["stats"]["bootstrap"]["n_resamples"] = 200
    # every rule asks SLURM for little memory, so that jobs run side by side on a small node
    cfg["resources"] = {
        rule: {"mem_mb": 1000}
        for rule in (
            "freeze_suite",
            "control",
            "training_pool",
            "train_segment",
            "eval_model",
            "control_replay",
        )
    }
    return cfg


def copy_workflow(root: Path, cfg: dict) -> Path:
    root.mkdir(parents=True)
    copy_sources(FILES, root)
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root


def smk_cmd(*args: str, slurm: bool) -> list[str]:
    cmd = [sys.executable, "-m", "snakemake", "--nolock", *args]
    if slurm:
        # jobs: 2 (the node's cores); the status checks come from the profile
        return [*cmd, "--workflow-profile", "profiles/slurm", "--jobs", "2"]
    return [*cmd, "--cores", "2"]


def smk(root: Path, env: dict, *args: str, slurm: bool = True, timeout: int = 900):
    return subprocess.run(
        smk_cmd(*args, slurm=slurm),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sacct(env: dict, *args: str) -> list[dict]:
    """sacct rows (allocations only, no steps) as dicts."""
    fields = "JobID,JobName,State,ExitCode,Comment"
    out = subprocess.run(
        ["sacct", "-X", "-P", "-n", "-a", "-S", "now-2hours", "-o", fields, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        dict(zip(fields.split(","), line.split("|"), strict=False)) for line in out.splitlines()
    ]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def segment_records(segment: Path) -> dict[str, str]:
    """A segment's rollouts and metrics without what the clock decides: the seconds columns of
    metrics.parquet and the sandbox block (wall time, pytest's temp names) of each report."""
    metrics = pd.read_parquet(segment / "metrics.parquet")
    metrics = metrics[[c for c in metrics.columns if not c.startswith("seconds_")]]
    rollouts = pd.read_parquet(segment / "rollouts.parquet")
    reports = [json.loads(r) for r in rollouts.pop("report")]
    for rep in reports:
        rep.pop("sandbox", None)
    return {
        "metrics": metrics.to_json(orient="records", double_precision=15),
        "rollouts": rollouts.to_json(orient="records", double_precision=15),
        "reports": json.dumps(reports, sort_keys=True),
    }
