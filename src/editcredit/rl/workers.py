"""Rollout and counterfactual-grading workers: in-process, local processes, or Ray actors
(local or a cluster).

Every pool runs whole task groups (`GroupJob`) and returns results in job order, so the number
and kind of workers change speed, never results.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

import torch

from editcredit.rl.rollout_worker import GroupJob, RolloutWorker


class WorkerPool(Protocol):
    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None: ...
    def run_groups(self, jobs: list[GroupJob]) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


class InProcessWorkers:
    """One worker in this process (GPU jobs, debugging)."""

    def __init__(self, worker_kwargs: dict[str, Any]) -> None:
        self.worker = RolloutWorker(**worker_kwargs)

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        self.worker.set_weights(state_dict)

    def run_groups(self, jobs: list[GroupJob]) -> list[dict[str, Any]]:
        return [self.worker.run_group(job) for job in jobs]

    def close(self) -> None:
        self.worker.close()


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


class ProcessWorkers:
    """``n`` local worker processes (spawned, no Ray): groups go to whichever worker is free."""

    def __init__(self, n: int, worker_kwargs: dict[str, Any]) -> None:
        context = multiprocessing.get_context("spawn")
        self.conns: list[Connection] = []
        self.procs = []
        for _ in range(n):
            parent, child = context.Pipe()
            # not a daemon: its worker may start processes of its own (sandboxes)
            proc = context.Process(target=_serve, args=(child, worker_kwargs))
            proc.start()
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

    def run_groups(self, jobs: list[GroupJob]) -> list[dict[str, Any]]:
        results: list[Any] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        busy: dict[Connection, int] = {}
        while pending or busy:
            for conn in self.conns:
                if conn not in busy and pending:
                    index, job = pending.pop(0)
                    conn.send(("run_group", job))
                    busy[conn] = index
            for conn in wait(list(busy)):
                results[busy.pop(conn)] = self._reply(conn)
        return results

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
    Python environment (docs/ray.md).
    """

    def __init__(
        self,
        n: int,
        worker_kwargs: dict[str, Any],
        address: str = "",
        gpus_per_worker: float = 0.0,
    ) -> None:
        import ray

        self._ray = ray
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
        kwargs = dict(worker_kwargs)
        if "device" in kwargs:
            kwargs["device"] = actor_device(str(kwargs["device"]), address, gpus_per_worker)
        actor = ray.remote(num_cpus=1, num_gpus=gpus_per_worker)(RolloutWorker)
        self.actors = [actor.remote(**kwargs) for _ in range(n)]

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        ref = self._ray.put({k: v.detach().cpu() for k, v in state_dict.items()})
        self._ray.get([a.set_weights.remote(ref) for a in self.actors])

    def run_groups(self, jobs: list[GroupJob]) -> list[dict[str, Any]]:
        from ray.util import ActorPool

        pool = ActorPool(self.actors)
        return list(pool.map(lambda a, job: a.run_group.remote(job), jobs))

    def close(self) -> None:
        try:
            self._ray.get([a.close.remote() for a in self.actors])
        finally:
            if self._owns:
                self._ray.shutdown()


def make_workers(ray_cfg: dict[str, Any], worker_kwargs: dict[str, Any]) -> WorkerPool:
    """Ray actors when ``ray.enabled`` (default); else ``num_workers`` local processes, or one
    in-process worker when that is 1."""
    if not ray_cfg.get("enabled", True):
        n = int(ray_cfg.get("num_workers", 1))
        return ProcessWorkers(n, worker_kwargs) if n > 1 else InProcessWorkers(worker_kwargs)
    return RayWorkers(
        int(ray_cfg["num_workers"]),
        worker_kwargs,
        ray_cfg.get("address", ""),
        float(ray_cfg.get("gpus_per_worker", 0)),
    )


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
