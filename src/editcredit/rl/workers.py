"""Rollout and counterfactual-grading workers: in-process, local processes, or Ray actors (a
local instance, an existing cluster, or a cluster of the job's own SLURM allocation).

Every pool runs whole task groups (`GroupJob`) and returns results in job order, so the number
and kind of workers change speed, never results.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Mapping
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, TypedDict, cast

import torch

from editcredit.config import section_config
from editcredit.rl import ray_allocation
from editcredit.rl.records import GroupResult
from editcredit.rl.rollout_worker import GroupJob, RolloutWorker
from editcredit.settings import RaySettings


class _WorkersKind(TypedDict):
    kind: str  # in_process, processes or ray


class WorkersDescription(_WorkersKind, total=False):
    """Where a pool's work ran (a job's volatile sidecar's ``workers``; a receipt keeps only
    the kind and number: ``rl.train_job.stable_workers``)."""

    workers: int  # worker processes (processes)
    address: str  # the Ray cluster's GCS address (ray)
    actor_nodes: list[str]  # each actor's Ray node id
    # an allocation's cluster (ray_allocation's describe: SLURM job, nodes, address, Ray nodes)
    allocation: dict[str, Any]
    actor_groups: list[int]  # per actor, the task groups it was handed


class WorkerPool(Protocol):
    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None: ...
    def run_groups(self, jobs: list[GroupJob]) -> list[GroupResult]: ...
    def close(self) -> None: ...
    def describe(self) -> WorkersDescription: ...


class InProcessWorkers:
    """One worker in this process (GPU jobs, debugging)."""

    def __init__(self, worker_kwargs: dict[str, Any]) -> None:
        self.worker = RolloutWorker(**worker_kwargs)

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        self.worker.set_weights(state_dict)

    def run_groups(self, jobs: list[GroupJob]) -> list[GroupResult]:
        return [self.worker.run_group(job) for job in jobs]

    def close(self) -> None:
        self.worker.close()

    def describe(self) -> WorkersDescription:
        return {"kind": "in_process"}


def _serve(conn: Connection, worker_kwargs: dict[str, Any]) -> None:
    """A worker process: one `RolloutWorker`, driven by (command, argument) messages."""
    worker = RolloutWorker(**worker_kwargs)
    while True:
        try:
            command, argument = conn.recv()
        except EOFError:  # the parent is gone
            worker.close()
            return
        try:
            if command == "close":
                worker.close()
                conn.send(("ok", None))
                return
            result = getattr(worker, command)(argument)
            conn.send(("ok", result))
        except BaseException as exc:  # the parent raises it, naming the worker's error
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


def start_spawned(target: Any, args: tuple) -> multiprocessing.process.BaseProcess:
    """Start ``target(*args)`` in a spawned process without running the caller's main script
    in it again.

    A spawned child imports the parent's ``__main__`` from its file, which runs a script's
    top-level code a second time: a Snakemake ``script:`` (no ``__main__`` guard, the rule's
    work at top level) would start its job again in every worker, and the worker dies in its
    bootstrap. ``target`` is importable by name, so the child needs nothing of the main module;
    its file is hidden from ``multiprocessing`` while the child starts. Not a daemon: the
    target may start processes of its own (sandboxes)."""
    main = sys.modules["__main__"]
    path = main.__dict__.pop("__file__", None)
    try:
        proc = multiprocessing.get_context("spawn").Process(target=target, args=args)
        proc.start()
    finally:
        if path is not None:
            main.__file__ = path
    return proc


class ProcessWorkers:
    """``n`` local worker processes (spawned, no Ray): groups go to whichever worker is free."""

    def __init__(self, n: int, worker_kwargs: dict[str, Any]) -> None:
        context = multiprocessing.get_context("spawn")
        self.conns: list[Connection] = []
        self.procs = []
        for _ in range(n):
            parent, child = context.Pipe()
            proc = start_spawned(_serve, (child, worker_kwargs))
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def _reply(self, conn: Connection) -> Any:
        status, value = conn.recv()
        if status != "ok":
            raise RuntimeError(f"rollout worker process failed: {value}")
        return value

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        weights = {k: v.detach().cpu() for k, v in state_dict.items()}
        for conn in self.conns:
            conn.send(("set_weights", weights))
        for conn in self.conns:
            self._reply(conn)

    def run_groups(self, jobs: list[GroupJob]) -> list[GroupResult]:
        results: list[Any] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        busy: dict[Connection, int] = {}
        while pending or busy:
            for conn in self.conns:
                if conn not in busy and pending:
                    index, job = pending.pop(0)
                    conn.send(("run_group", job))
                    busy[conn] = index
            # wait answers the ready ones of the connections it is given
            for ready in cast(list[Connection], wait(list(busy))):
                results[busy.pop(ready)] = self._reply(ready)
        return results

    def describe(self) -> WorkersDescription:
        return {"kind": "processes", "workers": len(self.procs)}

    def close(self) -> None:
        try:
            for conn in self.conns:
                conn.send(("close", None))
            for conn in self.conns:
                self._reply(conn)
        finally:
            for proc in self.procs:
                proc.join(timeout=30)
                if proc.is_alive():
                    proc.kill()


class RayWorkers:
    """``n`` Ray actors; a local Ray instance unless ``address`` names an existing cluster.

    On a cluster (``address``, e.g. ``"head-node:6379"`` or ``"auto"``) the actors run on any
    node with a free CPU (and ``gpus_per_worker`` GPUs); every node must see this repository's
    ``src/`` and the model directories at the same paths (a shared filesystem) and run the same
    Python environment (docs/ray.md). With ``cluster`` (a cluster of the job's SLURM allocation,
    ``editcredit.rl.ray_allocation``) the driver waits for its nodes, prints ``ray status`` and
    stops the cluster on closing.
    """

    def __init__(
        self,
        n: int,
        worker_kwargs: dict[str, Any],
        address: str,
        gpus_per_worker: float,
        cluster: ray_allocation.AllocationCluster | None = None,
        start_timeout_s: float | None = None,
    ) -> None:
        import ray

        self._ray = ray
        self.cluster = cluster
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
                enable_cluster_token_auth()
            else:
                kwargs["num_cpus"] = max(n, os.cpu_count() or 1)
            src = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": src}}
            ray.init(**kwargs)
        if cluster is not None:
            if start_timeout_s is None:
                raise ValueError("a Ray cluster of the allocation needs its start_timeout_s")
            cluster.wait_for_nodes(ray, start_timeout_s)
            print(cluster.status(), flush=True)
        kwargs = dict(worker_kwargs)
        if "device" in kwargs:
            kwargs["device"] = actor_device(str(kwargs["device"]), address, gpus_per_worker)
        actor = ray.remote(num_cpus=1, num_gpus=gpus_per_worker)(RolloutWorker)
        # actor handles: their methods' ``remote`` is made by Ray at run time
        self.actors: list[Any] = [actor.remote(**kwargs) for _ in range(n)]
        self.groups = [0] * n  # task groups handed to each actor
        self._index = {id(a): i for i, a in enumerate(self.actors)}
        self._described: WorkersDescription | None = None

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        ref = self._ray.put({k: v.detach().cpu() for k, v in state_dict.items()})
        self._ray.get([a.set_weights.remote(ref) for a in self.actors])

    def run_groups(self, jobs: list[GroupJob]) -> list[GroupResult]:
        from ray.util import ActorPool

        def submit(actor, job):
            self.groups[self._index[id(actor)]] += 1
            return actor.run_group.remote(job)

        pool = ActorPool(self.actors)
        return list(pool.map(submit, jobs))

    def describe(self) -> WorkersDescription:
        """Where the work ran: the cluster's GCS address, each actor's Ray node and the task
        groups it was handed, and for an allocation's cluster its SLURM job and nodes."""
        ray = self._ray
        if self._described is None:
            nodes = ray.get([a.__ray_call__.remote(_ray_node_id) for a in self.actors])
            self._described = {
                "kind": "ray",
                "address": ray.get_runtime_context().gcs_address,
                "actor_nodes": nodes,
            }
            if self.cluster is not None:
                self._described["allocation"] = self.cluster.describe()
        return {**self._described, "actor_groups": list(self.groups)}

    def close(self) -> None:
        try:
            self._ray.get([a.close.remote() for a in self.actors])
        finally:
            try:
                if self._owns:
                    self._ray.shutdown()
            finally:
                if self.cluster is not None:
                    self.cluster.stop()


def _ray_node_id(_actor: Any) -> str:
    """Run inside an actor (``__ray_call__``): the id of the Ray node it lives on."""
    import ray

    return ray.get_runtime_context().get_node_id()


def make_workers(
    ray_settings: RaySettings | Mapping[str, Any], worker_kwargs: dict[str, Any]
) -> WorkerPool:
    """Ray actors when ``ray.enabled``; else ``num_workers`` local processes, or one in-process
    worker when that is 1. With ``address: "slurm"`` a Ray cluster of the job's SLURM allocation
    is started first (``ray.allocation``) and stopped when the pool closes, or when building the
    pool fails. ``ray_settings`` is ``training.ray`` (a mapping is validated and its defaults
    filled by the schema)."""
    ray = ray_settings if isinstance(ray_settings, RaySettings) else _ray_settings(ray_settings)
    if not ray.enabled:
        n = ray.num_workers
        return ProcessWorkers(n, worker_kwargs) if n > 1 else InProcessWorkers(worker_kwargs)
    address, gpus = ray.address, float(ray.gpus_per_worker)
    if address != ray_allocation.ADDRESS:
        return RayWorkers(ray.num_workers, worker_kwargs, address, gpus)
    if gpus > 0:
        raise ray_allocation.RayAllocationError(
            f"training.ray.address '{address}' starts CPU-only Ray worker nodes; "
            f"gpus_per_worker must be 0, not {gpus}"
        )
    settings = ray.allocation
    cluster = ray_allocation.start_allocation_cluster(settings.to_dict())
    try:
        return RayWorkers(
            ray.num_workers,
            worker_kwargs,
            cluster.address,
            gpus,
            cluster=cluster,
            start_timeout_s=float(settings.start_timeout_s),
        )
    except BaseException:
        import ray as ray_module

        if ray_module.is_initialized():
            ray_module.shutdown()
        cluster.stop()
        raise


def _ray_settings(cfg: Mapping[str, Any]) -> RaySettings:
    """``training.ray`` from a mapping, validated and its defaults filled by the schema."""
    return RaySettings.from_mapping(section_config("training.ray", cfg), "training.ray")


def actor_device(device: str, address: str, gpus_per_worker: float) -> str:
    """The device a Ray actor generates on.

    An actor that reserves GPUs uses the one Ray gives it (``cuda``). One that reserves none keeps
    the job's device on a local Ray instance (it shares the job's GPU), but runs on CPU on a
    cluster, where its node need not have a GPU, let alone the job's.
    """
    if gpus_per_worker > 0:
        return "cuda"
    return "cpu" if address else device


def enable_cluster_token_auth() -> None:
    """Connect to a cluster the way ``ray start`` set it up: since Ray 2.5x ``ray start`` turns
    token authentication on when a token exists (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN``) and
    ``RAY_AUTH_MODE`` is unset, while a driver connecting by address does not, and would retry
    forever on "InvalidAuthToken". An explicit ``RAY_AUTH_MODE`` is respected."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
