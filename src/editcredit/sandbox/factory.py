"""Build a sandbox backend by name from the ``sandbox`` section of the config."""

from __future__ import annotations

from typing import Any

from editcredit.sandbox.base import Sandbox
from editcredit.sandbox.limits import GoldTimesBook, limit_settings

BACKENDS = ("docker", "local")


def make_sandbox(
    backend: str, cfg: dict[str, Any], gold_times: GoldTimesBook | None = None
) -> Sandbox:
    """``backend`` is 'docker' or 'local'; ``cfg`` is the config's sandbox section;
    ``gold_times`` the tasks' gold-run times (shared by a pool; measured where missing).
    Values come from the validated config (config/schema.yaml holds the defaults)."""
    factor = float(cfg["timeout_factor"])
    limits = limit_settings(cfg.get("test_limits"))
    if backend == "docker":
        from editcredit.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(
            image=cfg["image"],
            mode=cfg["docker_mode"],
            mem_limit=cfg["mem_limit"],
            pids_limit=int(cfg["pids_limit"]),
            timeout_factor=factor,
            limits=limits,
            gold_times=gold_times,
        )
    if backend == "local":
        from editcredit.sandbox.local_backend import LocalSandbox

        return LocalSandbox(
            timeout_factor=factor,
            limits=limits,
            gold_times=gold_times,
            mode=cfg["local_mode"],
        )
    raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(BACKENDS)}")
