"""Ray inside a SLURM allocation (training.ray.address: "slurm"), against the real one-node SLURM
of tests/workflow/conftest.py.

A training segment of the toy study (tests/slurmfactory.py) goes through profiles/slurm as an
sbatch job; inside it the job starts a Ray head on its node (no CPUs), one Ray worker node per
allocated node with ``srun --overlap`` (here: the one node), joins by address, and its rollout and
counterfactual-grading workers are Ray actors there. The job's receipt names the head's address,
the SLURM job, the Ray nodes and the node each actor ran on; its log holds ``ray status``; sacct
lists the worker node's step. Nothing of the cluster is left afterwards, also when the job fails,
and the segment's bytes equal the same segment trained locally with one in-process worker.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from policyfactory import train_toy_policy, write_toy_jsonl
from slurmfactory import (
    copy_workflow,
    digest,
    sacct,
    segment_records,
    smk,
    smk_cmd,
    study_config,
)
from taskfactory import CONFIG, REPO, TOY_AGENT

pytest.importorskip(
    "snakemake_executor_plugin_slurm",
    reason="snakemake-executor-plugin-slurm is a dev extra: pip install -e '.[dev]'",
)
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.slurm,
    pytest.mark.timeout(1500),
]

RUN = "M-s42"
SEGMENT = f"runs/{RUN}/step_1"
ALLOCATION = {"port": 0, "object_store_mb": 200, "start_timeout_s": 180}


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of this machine's processes that contain ``text``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append(f"{cmdline.parent.name}: {cmd[:200]}")
    return found


def _temp_dir(log: str) -> str:
    m = re.search(r"ray: head at \S+ on \S+, SLURM job \d+, .* temp dir (/tmp/ecray-\S+)", log)
    assert m, log[-3000:]
    return m[1]


def _steps(env: dict, jobid: str) -> list[dict]:
    """sacct rows of a job's steps (name, state)."""
    out = subprocess.run(
        ["sacct", "-P", "-n", "-j", jobid, "-o", "JobID,JobName,State"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        dict(zip(("JobID", "JobName", "State"), line.split("|"), strict=True))
        for line in out.splitlines()
    ]


def _wait_steps_ended(env: dict, jobid: str, name: str) -> list[dict]:
    for _ in range(120):  # accounting lags the controller by a moment
        rows = [r for r in _steps(env, jobid) if r["JobName"] == name]
        if rows and not any(r["State"] in ("RUNNING", "PENDING") for r in rows):
            return rows
        time.sleep(0.5)
    return [r for r in _steps(env, jobid) if r["JobName"] == name]


@pytest.fixture(scope="module")
def segments(tmp_path_factory, docker_sandbox, slurm):
    """The toy study's first segment of M-s42, trained locally (one in-process worker) and
    through profiles/slurm with Ray in the job's allocation (two actors)."""
    base = tmp_path_factory.mktemp("slurmray")
    policy = train_toy_policy(base / "policy", docker_sandbox, sft_steps=60, agent=TOY_AGENT)
    cfg = study_config(policy, write_toy_jsonl(base / "toy.jsonl"))
    local = copy_workflow(base / "local", cfg)
    ray_cfg = copy.deepcopy(cfg)
    ray_cfg["training"]["ray"].update(
        enabled=True, address="slurm", num_workers=2, allocation=ALLOCATION
    )
    cluster = copy_workflow(base / "cluster", ray_cfg)
    local_proc = subprocess.Popen(
        smk_cmd(SEGMENT, slurm=False),
        cwd=local,
        env=slurm,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    proc = smk(cluster, slurm, SEGMENT)
    local_out, _ = local_proc.communicate(timeout=900)
    assert local_proc.returncode == 0, local_out[-5000:]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    jobs = [
        r
        for r in sacct(slurm, "--name", re.search(r"SLURM run ID: (\S+)", proc.stderr)[1])
        if r["Comment"].startswith("rule_train_segment_")
    ]
    assert len(jobs) == 1, jobs
    return {
        "local": local,
        "cluster": cluster,
        "env": slurm,
        "policy": policy,
        "jobid": jobs[0]["JobID"],
        "job": jobs[0],
        "log": (cluster / f"logs/train_segment/{RUN}/step_1.log").read_text(),
    }


def test_rollout_workers_ran_as_actors_of_the_allocations_ray_cluster(segments):
    job, jobid, log = segments["job"], segments["jobid"], segments["log"]
    assert job["State"] == "COMPLETED" and job["ExitCode"] == "0:0", job
    receipt = json.loads((segments["cluster"] / SEGMENT / "segment.json").read_text())
    assert receipt["workers"] == {"kind": "ray", "workers": 2}
    # where they ran (addresses, nodes) changes from run to run: the receipt's volatile sidecar
    volatile = json.loads((segments["cluster"] / SEGMENT / "segment.volatile.json").read_text())
    workers = volatile["workers"]
    alloc = workers["allocation"]
    assert workers["kind"] == "ray"
    # the driver's GCS is the head this job started, inside this very SLURM job
    assert workers["address"] == alloc["address"]
    assert alloc["slurm_job_id"] == jobid
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    assert [n["host"] for n in alloc["slurm_nodes"]] == [host]
    cpus = alloc["slurm_nodes"][0]["cpus"]
    # the head (no CPUs) and one worker node holding the allocation's CPUs on that node
    heads = [n for n in alloc["ray_nodes"] if n["head"]]
    nodes = [n for n in alloc["ray_nodes"] if not n["head"]]
    assert len(heads) == 1 and heads[0]["cpus"] == 0, alloc
    assert len(nodes) == 1 and nodes[0]["cpus"] == cpus >= 2, alloc
    # both actors lived on the worker node that joined by address, and ran the step's groups
    assert workers["actor_nodes"] == [nodes[0]["node_id"]] * 2, workers
    assert sum(workers["actor_groups"]) == 2 and min(workers["actor_groups"]) >= 0, workers
    # `ray status`, printed by the job, saw both nodes
    active = log.split("Active:", 1)[1].split("Pending:", 1)[0]
    assert f"node_{heads[0]['node_id']}" in active and f"node_{nodes[0]['node_id']}" in active
    assert f"ray: head at {alloc['address']}" in log
    # the worker node ran as a step of the job, ended (cancelled) by the job before it finished
    steps = _wait_steps_ended(segments["env"], jobid, "ray-worker")
    assert len(steps) == 1 and steps[0]["State"].startswith("CANCELLED"), steps
    # and nothing of the cluster is left on the machine
    temp = _temp_dir(log)
    assert not Path(temp).exists()
    assert _processes_mentioning(temp) == []


def test_the_segment_equals_the_local_run(segments):
    local, cluster = segments["local"], segments["cluster"]
    for name in ("model/model.safetensors", "credit.parquet"):
        assert digest(cluster / SEGMENT / name) == digest(local / SEGMENT / name), name
    assert segment_records(cluster / SEGMENT) == segment_records(local / SEGMENT)
    there = json.loads((local / SEGMENT / "segment.json").read_text())
    assert there["workers"] == {"kind": "in_process"}


FAILING_JOB = """
import sys
from editcredit.rl.workers import make_workers

ray_cfg = {{"enabled": True, "address": "slurm", "num_workers": 1, "allocation": {alloc!r}}}
pool = make_workers(ray_cfg, {kwargs!r})
try:
    print("workers:", pool.describe(), flush=True)
    raise RuntimeError("planted failure after the cluster came up")
finally:
    pool.close()
"""


def test_a_failing_job_stops_its_ray_cluster(segments, tmp_path):
    """A job whose work fails once its cluster is up (planted): the job fails, the worker node's
    step is cancelled, and no process or temp dir of the cluster is left."""
    env = segments["env"]
    kwargs = {
        "model_dir": str(segments["policy"]),
        "agent_cfg": {
            **CONFIG["agent"],
            "max_turns": 1,
            "max_new_tokens": 4,
            "max_context_tokens": 512,
            "temperature": 1.0,
        },
        "reward_cfg": CONFIG["reward"],
        "grading_cfg": CONFIG["grading"],
        "sandbox_cfg": {**CONFIG["sandbox"], "backend": "local"},
        "threads": 1,
        "device": "cpu",
    }
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(FAILING_JOB.format(alloc=ALLOCATION, kwargs=kwargs)))
    out = tmp_path / "job.out"
    src = Path(REPO, "src")
    submitted = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--wait",
            "--cpus-per-task=2",
            f"--output={out}",
            f"--chdir={tmp_path}",
            f"--wrap=PYTHONPATH={src} {sys.executable} {script}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    text = out.read_text()
    assert submitted.returncode != 0, text[-3000:]
    jobid = submitted.stdout.strip().split(";")[0]
    assert "planted failure after the cluster came up" in text
    assert "'kind': 'ray'" in text, text[-3000:]
    steps = _wait_steps_ended(env, jobid, "ray-worker")
    assert len(steps) == 1 and steps[0]["State"].startswith("CANCELLED"), steps
    temp = _temp_dir(text)
    assert not Path(temp).exists()
    assert _processes_mentioning(temp) == []
