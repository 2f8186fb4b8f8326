"""Rollout and counterfactual-grading workers: in-process, or Ray actors (local or a cluster).

Both pools run whole task groups (`GroupJob`) and return results in job order, so the number of
workers changes speed, never results.
"""

from __future__ import annotations

import os
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


class RayWorkers:
    """``n`` Ray actors; a local Ray instance unless ``address`` names an existing cluster."""

    def __init__(self, n: int, worker_kwargs: dict[str, Any], address: str = "") -> None:
        import ray

        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
            else:
                kwargs["num_cpus"] = max(n, os.cpu_count() or 1)
            src = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": src}}
            ray.init(**kwargs)
        actor = ray.remote(num_cpus=1)(RolloutWorker)
        self.actors = [actor.remote(**worker_kwargs) for _ in range(n)]

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
    """Ray actors when ``ray.enabled`` (default), else one in-process worker."""
    if not ray_cfg.get("enabled", True):
        return InProcessWorkers(worker_kwargs)
    return RayWorkers(int(ray_cfg["num_workers"]), worker_kwargs, ray_cfg.get("address", ""))
