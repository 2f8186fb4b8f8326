"""The SLURM profile against a real one-node SLURM (dev/slurm.sh: munge, MariaDB, slurmdbd,
slurmctld, slurmd on this machine), not a recording of sbatch.

A CI-sized study (a toy suite of three tasks, a toy policy, arms M and B with seed 42, two
training segments of one step each, audits, evaluation, statistics, tables) runs through
``--workflow-profile profiles/slurm``: every job is an sbatch job (sacct lists them all) and the
outputs equal those of the same study run locally, byte for byte where the DAG is deterministic.
Then interruption and failure: Snakemake killed while a segment runs and started again resubmits
only what is missing; a job that fails on the node fails the run, naming its SLURM log; a segment
cancelled with scancel is rerun from its last complete checkpoint.

The session fixture ``slurm`` (tests/workflow/conftest.py) starts SLURM through dev/slurm.sh
(installing the Debian packages where missing, so as root) in its own state directory and ports,
and stops every daemon it started; the study's config and helpers are in tests/slurmfactory.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
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
from taskfactory import TOY_AGENT

pytest.importorskip(
    "snakemake_executor_plugin_slurm",
    reason="snakemake-executor-plugin-slurm is a dev extra: pip install -e '.[dev]'",
)
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.slurm,
    pytest.mark.timeout(1800),  # the module fixture runs the study twice
]

TARGET = "render_tables"  # the tables: needs controls, segments, audits, eval and statistics
RUN = "M-s42"


def _job_stats(output: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    block = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)\s*$", line)
        if not m:
            break
        if m[1] != "total":
            counts[m[1]] = int(m[2])
    return counts


def _deterministic_files(root: Path) -> dict[str, str]:
    """Outputs whose bytes are fixed by the DAG (path -> SHA256): the frozen suite, segment
    weights, credit ledgers, eval plan and slots."""
    patterns = (
        "data/frozen/*/tasks.parquet",
        "runs/*/step_*/model/model.safetensors",
        "runs/*/step_*/credit.parquet",
        "results/eval/*/*/slots.parquet",
        "results/eval/plan.parquet",
    )
    return {str(p.relative_to(root)): digest(p) for pat in patterns for p in sorted(root.glob(pat))}


def _audit_hashes(root: Path) -> dict[str, object]:
    """Every parameter audit's file and tensor hashes and its comparisons with the base and the
    previous checkpoint."""
    out = {}
    for path in sorted(root.glob("results/audits/*/step_*.json")):
        rec = json.loads(path.read_text())
        keys = ("ok", "files", "tensors", "vs_base", "vs_previous")
        out[str(path.relative_to(root))] = {k: rec[k] for k in keys}
    return out


@pytest.fixture(scope="module")
def studies(tmp_path_factory, docker_sandbox, slurm):
    """The toy study run locally and through SLURM (side by side); both roots and the SLURM run."""
    base = tmp_path_factory.mktemp("slurmstudy")
    # a few SFT steps: the policy acts in the right format; how well does not matter here
    policy = train_toy_policy(base / "policy", docker_sandbox, sft_steps=60, agent=TOY_AGENT)
    suite = write_toy_jsonl(base / "toy.jsonl")
    cfg = study_config(policy, suite)
    local = copy_workflow(base / "local", cfg)
    cluster = copy_workflow(base / "cluster", cfg)
    started = time.monotonic()
    local_proc = subprocess.Popen(
        smk_cmd(TARGET, slurm=False),
        cwd=local,
        env=slurm,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    proc = smk(cluster, slurm, TARGET)
    local_out, _ = local_proc.communicate(timeout=900)
    assert local_proc.returncode == 0, local_out[-5000:]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return {
        "local": local,
        "cluster": cluster,
        "proc": proc,
        "env": slurm,
        "seconds": time.monotonic() - started,
    }


def test_every_job_goes_through_sbatch(studies):
    """sacct lists one completed allocation per job of the run (rule all-like targets run
    nothing locally), named after the run and commented with its rule."""
    log = studies["proc"].stdout + studies["proc"].stderr
    counts = _job_stats(log)
    assert counts.get("train_segment") == 4 and counts.get("render_tables") == 1, log[-3000:]
    uuid = re.search(r"SLURM run ID: (\S+)", log)
    assert uuid, log[-3000:]
    rows = sacct(studies["env"], "--name", uuid[1])
    by_rule: dict[str, int] = {}
    for row in rows:
        assert row["State"] == "COMPLETED" and row["ExitCode"] == "0:0", row
        rule = row["Comment"].split("_wildcards_")[0].removeprefix("rule_")
        by_rule[rule] = by_rule.get(rule, 0) + 1
    assert by_rule == counts, (by_rule, counts)


def test_outputs_equal_the_local_run(studies):
    local, cluster = studies["local"], studies["cluster"]
    ours, theirs = _deterministic_files(cluster), _deterministic_files(local)
    assert len(ours) >= 4 * 2 + 3, sorted(ours)  # 4 segments x (weights, credit), eval slots
    assert ours == theirs
    segments = sorted(p.relative_to(local) for p in local.glob("runs/*/step_*"))
    assert len(segments) == 4
    for seg in segments:
        assert segment_records(cluster / seg) == segment_records(local / seg), seg
    assert _audit_hashes(cluster) == _audit_hashes(local) != {}
    for table in sorted((local / "paper" / "tables").glob("*.tex")):
        assert (cluster / "paper" / "tables" / table.name).is_file(), table.name


def test_job_failing_on_the_node_fails_the_run_with_its_slurm_log(studies):
    """(Runs on the complete tree, before the segment tests change it.) A corrupt input (planted)
    makes compare raise on the node: sacct says FAILED, Snakemake
    stops with an error naming the job's SLURM log, which holds the traceback."""
    root, env = studies["cluster"], studies["env"]
    paired = root / "results/stats/paired/M-B.json"
    paired.write_text("{not json")
    proc = smk(root, env, "results/stats/M-B.json")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    failed = re.search(r"SLURM-job '(\d+)' failed, SLURM status is: 'FAILED'", text)
    assert failed, text[-3000:]
    assert _wait_state(env, failed[1], "FAILED") == "FAILED"
    log = re.search(rf"(\S+/slurm_logs/rule_compare/\S+/{failed[1]}\.log)", text)
    assert log, text[-3000:]
    assert "Error in rule compare" in Path(log[1]).read_text()
    assert (
        "JSONDecodeError" in (root / "logs/compare/M-B.log").read_text() + Path(log[1]).read_text()
    )
    assert not (root / "results/stats/M-B.json").exists()


SEGMENT = f"runs/{RUN}/step_2"


def _drop(path: Path) -> None:
    """Remove a protected output directory (Snakemake made it read-only)."""
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    shutil.rmtree(path)


def _start(root: Path, env: dict, *args: str, name: str) -> tuple[subprocess.Popen, Path]:
    out = root / f"{name}.out"
    with open(out, "w") as fh:
        proc = subprocess.Popen(
            smk_cmd(*args, slurm=True),
            cwd=root,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_default_sigint,
        )
    return proc, out


def _default_sigint() -> None:
    """Snakemake, like a user's shell's, takes Ctrl-C: a test session started in the background
    (``cmd &`` in a non-interactive shell) ignores SIGINT, and its children inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _running_job(env: dict, rule: str, proc: subprocess.Popen, out: Path) -> str:
    """The SLURM id of the first running job of ``rule`` (waits for it)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert proc.poll() is None, out.read_text()[-3000:]
        queue = subprocess.run(
            ["squeue", "-h", "-t", "R", "-o", "%i|%k"], env=env, capture_output=True, text=True
        ).stdout
        for line in queue.splitlines():
            jobid, comment = line.split("|", 1)
            if comment.startswith(f"rule_{rule}_"):
                return jobid
        time.sleep(0.5)
    raise AssertionError(f"no {rule} job ran within 600 s: {out.read_text()[-3000:]}")


def _state(env: dict, jobid: str) -> str:
    rows = sacct(env, "-j", jobid)
    return rows[0]["State"] if rows else ""


def _wait_state(env: dict, jobid: str, prefix: str) -> str:
    for _ in range(120):  # accounting lags the controller by a moment
        state = _state(env, jobid)
        if state.startswith(prefix):
            return state
        time.sleep(0.5)
    return _state(env, jobid)


def _same_segment_as_local(studies) -> None:
    ours, theirs = studies["cluster"] / SEGMENT, studies["local"] / SEGMENT
    for name in ("model/model.safetensors", "credit.parquet"):
        assert digest(ours / name) == digest(theirs / name), name
    assert segment_records(ours) == segment_records(theirs)


def test_snakemake_killed_while_a_segment_runs_resubmits_only_the_missing(studies):
    """Ctrl-C (SIGINT) to Snakemake while segment 2 runs on the node: Snakemake cancels its job
    (SIGTERM would let it finish); started again, it submits segment 2 alone, leaves segment 1
    untouched, and the result is the bytes of the uninterrupted local run."""
    root, env = studies["cluster"], studies["env"]
    first = root / f"runs/{RUN}/step_1/model/model.safetensors"
    stamp = first.stat().st_mtime_ns
    _drop(root / SEGMENT)
    proc, out = _start(root, env, SEGMENT, name="interrupted")
    jobid = _running_job(env, "train_segment", proc, out)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) != 0
    assert _wait_state(env, jobid, "CANCELLED").startswith("CANCELLED"), out.read_text()[-3000:]

    dry = smk(root, env, SEGMENT, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert _job_stats(dry.stdout + dry.stderr) == {"train_segment": 1}, dry.stdout[-3000:]
    done = smk(root, env, SEGMENT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert first.stat().st_mtime_ns == stamp
    _same_segment_as_local(studies)


def test_scancelled_segment_is_rerun_from_its_last_checkpoint(studies):
    """scancel of a running segment job; the next run trains that segment again from step 1, to
    the same bytes. snakemake-executor-plugin-slurm 2.8.0 does not know sacct's state
    'CANCELLED by <uid>' and keeps waiting for the job: the test then stops Snakemake (Ctrl-C)
    as a user would; a plugin that reports it must name the job's SLURM log."""
    root, env = studies["cluster"], studies["env"]
    _drop(root / SEGMENT)
    proc, out = _start(root, env, SEGMENT, name="scancelled")
    jobid = _running_job(env, "train_segment", proc, out)
    subprocess.run(["scancel", jobid], env=env, check=True)
    assert _wait_state(env, jobid, "CANCELLED").startswith("CANCELLED")
    try:
        proc.wait(timeout=45)  # the profile's first status check comes after 10 s
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    else:
        text = out.read_text()
        assert f"SLURM-job '{jobid}' failed" in text, text[-3000:]
        log = re.search(rf"(\S+/slurm_logs/rule_train_segment/\S+/{jobid}\.log)", text)
        assert log and Path(log[1]).is_file(), text[-3000:]
    assert proc.returncode != 0
    assert not (root / SEGMENT).exists()

    done = smk(root, env, SEGMENT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "steps 2..2" in (root / f"logs/train_segment/{RUN}/step_2.log").read_text()
    _same_segment_as_local(studies)
