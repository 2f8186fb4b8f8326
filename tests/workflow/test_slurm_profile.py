"""The SLURM profile for real: Snakemake (not a dry run) submits the GPU rules of the real-study
preset through snakemake-executor-plugin-slurm, with fake SLURM commands on PATH that record
their arguments; the sbatch lines must carry the GPU request, the memory and the runtime.

The workflow is a copy of the repository's; the inputs of the GPU jobs are planted as files and
``--allowed-rules`` keeps every other rule out, so only the submissions are exercised. The fake
``sacct`` reports every job FAILED, so the run ends (non-zero) right after the first status
check; nothing is executed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout import copy_sources
from taskfactory import REPO

pytest.importorskip(
    "snakemake_executor_plugin_slurm",
    reason="snakemake-executor-plugin-slurm is a dev extra: pip install -e '.[dev]'",
)

FILES = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")
PRESETS = ("config/presets/full-study.yaml", "config/presets/real-study.yaml")
GPU_RULES = ("train_segment", "eval_model", "probe")

FAKE_SLURM = """#!{python}
# A stand-in for the SLURM commands: records argv, answers like a quiet cluster.
import fcntl, json, os, sys
from pathlib import Path

name = Path(sys.argv[0]).name
state = Path(os.environ["FAKE_SLURM_DIR"])
with open(state / "lock", "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    with open(state / "calls.jsonl", "a") as fh:
        fh.write(json.dumps([name, *sys.argv[1:]]) + "\\n")
    ids_file = state / "jobids"
    ids = ids_file.read_text().split() if ids_file.exists() else []
    if name == "sbatch":
        jobid = str(7000 + len(ids))
        ids_file.write_text("\\n".join([*ids, jobid]) + "\\n")
        print(jobid)
    elif name == "sacct" and "--name" in sys.argv:
        print("\\n".join(f"{{j}}|FAILED" for j in ids))
    elif name == "scontrol":
        print("MinJobAge = 300 sec\\nMaxArraySize = 1001")
    elif name == "sinfo":
        print("PARTITION\\nbatch*")
"""


def _merged(*paths: Path) -> dict:
    def merge(a: dict, b: dict) -> dict:
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out

    cfg: dict = {}
    for p in paths:
        cfg = merge(cfg, yaml.safe_load(p.read_text()))
    return cfg


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """Run the workflow against the fake cluster; the recorded sbatch argv per rule."""
    root = tmp_path_factory.mktemp("slurmwf")
    copy_sources(FILES, root)
    cfg = _merged(root / "config/config.yaml", *(root / p for p in PRESETS))
    model, suite = cfg["training"]["model"], cfg["training"]["suite"]
    arm, seeds = next(iter(cfg["training"]["plan"].items()))
    segment = f"runs/{arm}-s{seeds[0]}/step_{cfg['training']['segment_steps']}"
    # the inputs of the GPU jobs, as if the upstream rules had run
    for path in (
        f"models/base/{model}/config.json",
        f"data/frozen/{suite}/tasks.parquet",
        f"data/frozen/{suite}/manifest.json",
        f"results/controls/{suite}/summary.json",
        "results/training/pool.json",
        "results/training/pool_screen.parquet",
        "results/eval/plan.parquet",
    ):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("{}")
    (root / f"results/controls/{suite}/tasks").mkdir()  # the control rule's per-task records
    targets = {
        "train_segment": segment,
        "eval_model": "results/eval/base/holdout/slots.parquet",
        "probe": f"results/base/{model}/probe.json",
    }
    state = root / "fake-slurm"
    bindir = state / "bin"
    bindir.mkdir(parents=True)
    fake = bindir / "fake_slurm"
    fake.write_text(FAKE_SLURM.format(python=sys.executable))
    fake.chmod(0o755)
    for cmd in ("sbatch", "sacct", "squeue", "sinfo", "scontrol", "sacctmgr", "sshare", "scancel"):
        (bindir / cmd).symlink_to(fake)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_SLURM_DIR": str(state),
    }
    env.pop("SLURM_JOB_ID", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            *targets.values(),
            "--workflow-profile",
            "profiles/slurm",
            "--configfile",
            *PRESETS,
            "--allowed-rules",
            *GPU_RULES,
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--latency-wait",
            "1",
            "--nolock",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    log = proc.stdout[-4000:] + proc.stderr[-4000:]
    calls = [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]
    sbatch = [c[1:] for c in calls if c[0] == "sbatch"]
    by_rule = {}
    for argv in sbatch:
        comment = argv[argv.index("--comment") + 1]
        by_rule[comment.split("_wildcards_")[0].removeprefix("rule_")] = argv
    return {"by_rule": by_rule, "log": log, "cfg": cfg, "targets": targets}


def _flag(argv: list[str], name: str) -> str | None:
    """The value of ``name`` in an sbatch argv (``--x=v`` or ``--x v``), None when absent."""
    for i, arg in enumerate(argv):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name:
            return argv[i + 1]
    return None


def test_every_gpu_rule_is_submitted_once(submissions):
    assert sorted(submissions["by_rule"]) == sorted(GPU_RULES), submissions["log"]


@pytest.mark.parametrize("rule", GPU_RULES)
def test_sbatch_requests_the_rules_gpus_memory_and_runtime(submissions, rule):
    argv = submissions["by_rule"][rule]
    cfg = submissions["cfg"]
    gpus = {
        "train_segment": cfg["training"]["gpu"],
        "eval_model": cfg["evaluation"]["gpu"],
        "probe": cfg["models"][cfg["training"]["model"]]["gpu"],
    }[rule]
    profile = yaml.safe_load(Path(REPO, "profiles/slurm/profile.yaml").read_text())
    assert gpus >= 1
    assert _flag(argv, "--gpus") == str(gpus), shlex.join(argv)
    assert _flag(argv, "--mem") == str(cfg["resources"][rule]["mem_mb"])
    assert _flag(argv, "-t") == str(profile["set-resources"][rule]["runtime"])
    assert int(_flag(argv, "--cpus-per-task")) >= 1  # the rule's threads
    assert _flag(argv, "-p") == "batch"  # the cluster's default partition (sinfo)
    # the job runs this workflow's rule with the slurm job-step executor
    wrap = _flag(argv, "--wrap")
    assert "--executor slurm-jobstep" in wrap and f"{rule}:" in wrap


def test_real_study_preset_keeps_the_full_study_settings():
    """real-study.yaml is layered on full-study.yaml: it adds a model, data, images, backends and
    resources, and changes none of the published settings (METHOD §4, §8)."""
    full = yaml.safe_load(Path(REPO, PRESETS[0]).read_text())
    merged = _merged(*(Path(REPO, p) for p in PRESETS))

    def leaves(d: dict, prefix: str = ""):
        for k, v in d.items():
            yield from leaves(v, f"{prefix}{k}.") if isinstance(v, dict) else [(prefix + k, v)]

    changed = {k: v for k, v in leaves(full) if dict(leaves(merged)).get(k) != v}
    assert changed == {}
    assert merged["generation"]["backend"] == "vllm"
    suite = merged["suites"][merged["training"]["suite"]]
    assert suite["generator"] == "swebench" and "{instance_id}" in suite["image_template"]
    assert merged["models"][merged["training"]["model"]]["source"] == "import"


def test_real_study_training_config_builds_for_long_trajectories():
    """The layered real study (over the embedded default) gives a valid TrainConfig that
    recomputes activations and caps a micro-batch at one context of tokens."""
    from editcredit.rl.train_job import train_config

    cfg = _merged(Path(REPO, "config/config.yaml"), *(Path(REPO, p) for p in PRESETS))
    train = train_config(cfg["training"], cfg["agent"], "M", 42)
    assert train.gradient_checkpointing is True
    assert train.micro_batch_tokens == cfg["agent"]["max_context_tokens"] == 32768
    assert (train.tasks_per_step, train.group_size, train.lr) == (16, 8, 1e-6)
