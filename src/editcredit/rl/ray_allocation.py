"""A Ray cluster made of the job's own SLURM allocation (``training.ray.address: "slurm"``).

The job, the Ray driver, starts the head on its own node with no CPUs: the driver gets a raylet
to attach to and no actor lands beside it. Then one Ray worker node per node of the allocation
(the head's node included), each an ``srun --overlap`` step holding the CPUs the allocation has
there, joins the head by address. Every Ray process of the cluster sees one token made for this
job (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``), passed in the environment.

Stopping ends what was started here and nothing else: SIGTERM to each ``srun`` (SLURM cancels the
step and ends every process in it), then the head's process group; should the job die first,
SLURM ends the job's steps and processes with it. Never ``ray stop``: it ends every Ray process
of the user on the node, other jobs' clusters included.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ADDRESS = "slurm"  # the value of training.ray.address that asks for this cluster
# SLURM variables a nested srun may keep: the allocation's identity. The others are the
# enclosing step's (tasks, CPUs, memory, GPUs) and would size the worker steps.
SLURM_KEEP = {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_CONF", "SLURM_CLUSTER_NAME"}
STARTED = "Ray runtime started"


class RayAllocationError(RuntimeError):
    """The allocation's Ray cluster could not be started (the message says which step)."""


def count_cpu_ids(ids: str) -> int:
    """How many CPUs a ``CPU_IDs`` list of ``scontrol show job -d`` names: ``"0-3,8"`` -> 5."""
    n = 0
    for part in ids.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise ValueError(f"CPU_IDs: cannot read {part!r} in {ids!r}")
        n += int(m[2] or m[1]) - int(m[1]) + 1
    return n


def job_cpus(detail: str) -> list[tuple[str, int]]:
    """The per-node CPU lines of ``scontrol show job -d``: ``[(host list, CPUs on each)]``, e.g.
    ``"     Nodes=n[1-2] CPU_IDs=0-3 Mem=1000 GRES="`` -> ``[("n[1-2]", 4)]``."""
    rows = re.findall(r"^\s*Nodes=(\S+) CPU_IDs=(\S+)", detail, flags=re.MULTILINE)
    return [(hosts, count_cpu_ids(ids)) for hosts, ids in rows]


def _hostnames(hostlist: str, env: dict[str, str]) -> list[str]:
    return subprocess.run(
        ["scontrol", "show", "hostnames", hostlist],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()


def allocation_nodes(env: dict[str, str]) -> list[tuple[str, int]]:
    """The allocation's nodes and the CPUs it holds on each, from the controller
    (``scontrol show job -d``): inside a job step (Snakemake's srun) the batch step's
    ``SLURM_JOB_CPUS_PER_NODE`` is gone."""
    job_id = env.get("SLURM_JOB_ID")
    if not job_id:
        raise RayAllocationError(
            f"training.ray.address '{ADDRESS}' runs Ray inside the job's SLURM allocation, but "
            "SLURM_JOB_ID is not set: submit the job through SLURM (profiles/slurm, sbatch), or "
            "set training.ray.address to '' (a local instance) or a cluster's address"
        )
    detail = subprocess.run(
        ["scontrol", "show", "job", "-d", job_id],
        capture_output=True,
        text=True,
        env=env,
    )
    rows = job_cpus(detail.stdout)
    if detail.returncode or not rows:
        raise RayAllocationError(
            f"scontrol show job -d {job_id} names no node with its CPU_IDs: "
            f"{(detail.stdout + detail.stderr)[-2000:]}"
        )
    return [(host, cpus) for hosts, cpus in rows for host in _hostnames(hosts, env)]


def ray_env(env: dict[str, str], token: str) -> dict[str, str]:
    """The environment of every Ray process of the cluster: the job's, without the enclosing
    step's SLURM sizing, with this cluster's token."""
    out = {
        k: v
        for k, v in env.items()
        if not (k.startswith(("SLURM_", "SRUN_", "SBATCH_")) and k not in SLURM_KEEP)
    }
    out.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, RAY_USAGE_STATS_ENABLED="0")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _ray_cli() -> str:
    beside = Path(sys.executable).with_name("ray")
    return str(beside) if beside.exists() else (shutil.which("ray") or "ray")


def _tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _use_token(env: dict[str, str]) -> None:
    """This process (the driver) joins with the cluster's token. Ray reads its configuration
    once, on import, so it is read again (as Ray's own ``ray start`` does after setting the
    mode), and the token loader forgets a token it may have cached."""
    os.environ["RAY_AUTH_MODE"] = env["RAY_AUTH_MODE"]
    os.environ["RAY_AUTH_TOKEN"] = env["RAY_AUTH_TOKEN"]
    try:
        # names of the compiled module that its stub does not list (newer Rays have them)
        from ray._raylet import (  # type: ignore[attr-defined]
            AuthenticationTokenLoader,
            Config,
        )
    except ImportError:  # a Ray without token authentication
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


@dataclass
class AllocationCluster:
    """A running Ray cluster of one SLURM allocation (``start_allocation_cluster``)."""

    job_id: str
    address: str
    nodes: list[tuple[str, int]]
    temp_dir: Path
    env: dict[str, str]
    head: subprocess.Popen
    steps: list[subprocess.Popen] = field(default_factory=list)
    ray_nodes: list[dict[str, Any]] = field(default_factory=list)

    def check_alive(self) -> None:
        for name, proc in [("head", self.head), *(("srun", p) for p in self.steps)]:
            if proc.poll() is not None:
                logs = "\n".join(_tail(p, 1500) for p in sorted(self.temp_dir.glob("*.log")))
                raise RayAllocationError(
                    f"Ray {name} (pid {proc.pid}) exited with {proc.returncode}:\n{logs}"
                )

    def wait_for_nodes(self, ray, timeout_s: float) -> list[dict[str, Any]]:
        """Wait (connected driver) until the head and every worker node are alive, each with
        its CPUs; returns those nodes."""
        want = sorted(c for _, c in self.nodes)
        deadline = time.monotonic() + timeout_s
        while True:
            alive = [n for n in ray.nodes() if n["Alive"]]
            workers = sorted(
                int(n["Resources"].get("CPU", 0))
                for n in alive
                if "node:__internal_head__" not in n["Resources"]
            )
            if len(alive) == len(self.nodes) + 1 and workers == want:
                break
            self.check_alive()
            if time.monotonic() > deadline:
                raise RayAllocationError(
                    f"after {timeout_s:.0f} s the Ray cluster at {self.address} has worker nodes "
                    f"with {workers} CPUs, not {want} (logs under {self.temp_dir})"
                )
            time.sleep(0.5)
        self.ray_nodes = [
            {
                "node_id": n["NodeID"],
                "host": n["NodeManagerHostname"],
                "cpus": int(n["Resources"].get("CPU", 0)),
                "head": "node:__internal_head__" in n["Resources"],
            }
            for n in sorted(alive, key=lambda n: n["NodeID"])
        ]
        return self.ray_nodes

    def status(self, timeout_s: float = 60.0) -> str:
        """``ray status`` for this cluster, once it lists every node as active (its autoscaler
        view lags the nodes' registration by a few seconds); what the job prints into its log."""
        deadline = time.monotonic() + timeout_s
        while True:
            out = subprocess.run(
                [_ray_cli(), "status", f"--address={self.address}"],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=120,
            )
            text = out.stdout + (out.stderr if out.returncode else "")
            active = text.split("Active:", 1)[-1].split("Pending:", 1)[0]
            if active.count(" node_") > len(self.nodes) or time.monotonic() > deadline:
                return text
            time.sleep(2)

    def describe(self) -> dict[str, Any]:
        return {
            "slurm_job_id": self.job_id,
            "slurm_nodes": [{"host": h, "cpus": c} for h, c in self.nodes],
            "address": self.address,
            "ray_nodes": self.ray_nodes,
        }

    def stop(self) -> None:
        """End the worker steps and the head (each by its own process), then remove the
        head node's temp dir; safe to call twice."""
        for proc in self.steps:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)  # srun: SLURM cancels the step
        for proc in self.steps:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        try:
            os.killpg(self.head.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.head.wait(10)
            # `ray start --block` keeps looping after its processes ended
            os.killpg(self.head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.head.wait(30)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        for var in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
            if os.environ.get(var) == self.env[var]:
                del os.environ[var]


def start_allocation_cluster(settings: dict[str, Any]) -> AllocationCluster:
    """Start the head here and one worker node per node of this job's allocation; the token goes
    into this process's environment too, for the driver's ``ray.init``. ``settings`` is
    ``training.ray.allocation`` (port, object_store_mb, start_timeout_s)."""
    from ray.util import get_node_ip_address

    nodes = allocation_nodes(dict(os.environ))
    job_id = os.environ["SLURM_JOB_ID"]
    ip = get_node_ip_address()
    port = int(settings["port"]) or _free_port()
    address = f"{ip}:{port}"
    temp = Path(tempfile.mkdtemp(prefix="ecray-", dir="/tmp"))  # short: Ray's sockets go here
    env = ray_env(dict(os.environ), secrets.token_hex(32))
    store = int(settings["object_store_mb"])
    store_arg = [f"--object-store-memory={store * 1024 * 1024}"] if store else []
    ray = _ray_cli()
    print(
        f"ray: head at {address} on {socket.gethostname()}, SLURM job {job_id}, "
        f"worker nodes {nodes}, temp dir {temp}"
    )
    with open(temp / "head.log", "w") as log:
        head = subprocess.Popen(
            [
                ray,
                "start",
                "--head",
                "--block",
                f"--port={port}",
                f"--node-ip-address={ip}",
                "--num-cpus=0",
                "--num-gpus=0",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--temp-dir={temp}",
                *store_arg,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    cluster = AllocationCluster(job_id, address, nodes, temp, env, head)
    try:
        deadline = time.monotonic() + float(settings["start_timeout_s"])
        while STARTED not in _tail(temp / "head.log", 100_000):
            cluster.check_alive()
            if time.monotonic() > deadline:
                raise RayAllocationError(
                    f"ray start --head did not come up:\n{_tail(temp / 'head.log')}"
                )
            time.sleep(0.5)
        for host, cpus in nodes:
            with open(temp / f"worker-{host}.log", "w") as log:
                cluster.steps.append(
                    subprocess.Popen(
                        [
                            "srun",
                            "--overlap",
                            f"--jobid={job_id}",
                            "--nodes=1",
                            "--ntasks=1",
                            f"--cpus-per-task={cpus}",
                            f"--nodelist={host}",
                            "--export=ALL",
                            "--job-name=ray-worker",
                            ray,
                            "start",
                            f"--address={address}",
                            "--block",
                            f"--num-cpus={cpus}",
                            "--num-gpus=0",
                            "--disable-usage-stats",
                            *store_arg,
                        ],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )
                )
        _use_token(env)
    except BaseException:
        cluster.stop()
        raise
    return cluster
