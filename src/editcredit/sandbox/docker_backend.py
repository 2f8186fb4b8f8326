"""Docker sandboxes: no network, memory and pid limits, non-root, read-only root, timeouts.

Two modes behind the same interface:

- ``warm`` (default): one long-lived container per sandbox runs the guest runner as a server
  with pytest already imported; each grading is a forked child on a fresh workspace.
- ``fresh``: a new container per grading, as SWE-bench's harness does (the speed anchor).

An image-based task (``task.image``) is always graded in a fresh container of its own image: its
base tree is copied out of the image once (without ``.git``; :class:`ImageTrees`), the patch is
applied on the host as for inline tasks, and the prepared tree is mounted read-only over the
image's ``workdir``, so nothing of the image's repository metadata is visible to the tests.

Every container carries the label ``editcredit.sandbox`` and its owner's ``editcredit.owner``
(:mod:`editcredit.sandbox.owners`) and is removed on every path; what a killed job could not
remove, the next job on its host removes when it first talks to the daemon (``docker_client``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editcredit.data.task import Task
from editcredit.sandbox.base import (
    GUEST_DIR,
    TEST_ENV,
    RunRequest,
    RunResult,
    Sandbox,
    SandboxError,
    result_from_out_dir,
)
from editcredit.sandbox.limits import GoldTimesBook, LimitSettings
from editcredit.sandbox.owners import list_labelled, owned_labels, reap_once
from editcredit.sandbox.spool import MARGIN_S, make_spool, run_on_server, wait_ready
from editcredit.sandbox.workspace import PatchOutcome, materialize_from_base

if TYPE_CHECKING:
    from editcredit.sandbox.image import ImageTrees

LABEL = "editcredit.sandbox"
SANDBOX_UID = 65534
START_TIMEOUT_S = 60.0


def docker_client():
    """A docker SDK client, or SandboxError naming the daemon address and the fix."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise SandboxError("the docker Python SDK is not installed") from exc
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        raise SandboxError(
            f"no docker daemon at {host} ({type(exc).__name__}); start it (./dev.sh setup) "
            "or use --backend local"
        ) from exc
    reap_once(client, LABEL)  # the first time this process talks to the daemon
    return client


class DockerSandbox(Sandbox):
    """Grades in docker containers of the sandbox image."""

    name = "docker"
    isolation = "docker: network none, non-root, read-only root, memory and pid limits"

    def __init__(
        self,
        image: str,
        mode: str,
        mem_limit: str,
        pids_limit: int,
        timeout_factor: float,
        limits: LimitSettings,
        gold_times: GoldTimesBook | None = None,
    ) -> None:
        """``image``, ``mode`` (``sandbox.docker_mode``), ``mem_limit``, ``pids_limit``,
        ``timeout_factor`` and ``limits`` (``sandbox.test_limits``) come from the typed settings
        alone (:func:`editcredit.sandbox.factory.make_sandbox`); config/schema.yaml holds their
        defaults."""
        if mode not in ("warm", "fresh"):
            raise ValueError(f"unknown docker sandbox mode {mode!r} (warm or fresh)")
        self._client = docker_client()
        try:
            self._client.images.get(image)
        except Exception as exc:
            raise SandboxError(
                f"sandbox image {image!r} not found; build it with `editcredit build-image`"
            ) from exc
        spool = Path(tempfile.mkdtemp(prefix="editcredit-spool-"))
        super().__init__(timeout_factor, spool / "jobs", limits, gold_times)
        self.image, self.mode = image, mode
        self._spool = spool
        self._limits = {
            "mem_limit": mem_limit,
            "memswap_limit": mem_limit,
            "pids_limit": pids_limit,
        }
        make_spool(spool)
        _chmod(spool, 0o755)
        _chmod(spool / "jobs", 0o755)
        _chmod(spool / "requests", 0o777)
        _chmod(spool / "control", 0o777)
        self._server: Any = None  # the warm mode's server container
        self._trees: ImageTrees | None = None
        self._janitor = ThreadPoolExecutor(1, thread_name_prefix="sandbox-janitor")
        self._finalizer = weakref.finalize(self, _cleanup, self._client, [], spool)
        if mode == "warm":
            self._start_server()

    # -- containers ---------------------------------------------------------------------
    def _container_kwargs(self) -> dict:
        return dict(
            image=self.image,
            detach=True,
            network_mode="none",
            user=f"{SANDBOX_UID}:{SANDBOX_UID}",
            read_only=True,
            tmpfs={"/tmp": "rw,size=128m,mode=1777"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            labels=owned_labels(LABEL),
            volumes={
                str(GUEST_DIR): {"bind": "/grader", "mode": "ro"},
                str(self._spool): {"bind": "/spool", "mode": "rw"},
            },
            working_dir="/tmp",
            environment={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"},
            **self._limits,
        )

    def _start_server(self) -> None:
        ready = self._spool / "control" / "ready.json"
        ready.unlink(missing_ok=True)
        (self._spool / "control" / "stop").unlink(missing_ok=True)
        self._server = self._client.containers.run(
            command=["python3", "/grader/runner.py", "serve", "/spool"],
            **self._container_kwargs(),
        )
        self._finalizer.detach()
        self._finalizer = weakref.finalize(
            self, _cleanup, self._client, [self._server.id], self._spool
        )
        if not wait_ready(self._spool, lambda: self._alive(self._server), START_TIMEOUT_S):
            logs = self._server.logs(tail=20).decode(errors="replace")
            self.close()
            raise SandboxError(f"sandbox server in {self.image!r} did not start: {logs}")

    def _alive(self, container) -> bool:
        try:
            container.reload()
        except Exception:
            return False
        return container.status in ("created", "running")

    # -- image-based tasks -----------------------------------------------------------------
    @property
    def trees(self) -> ImageTrees:
        """Host copies of task images' work trees (made on first use, removed on close)."""
        if self._trees is None:
            from editcredit.sandbox.image import ImageTrees

            self._trees = ImageTrees(self._client)
        return self._trees

    def _materialize(self, task: Task, patch: str, tree: Path) -> PatchOutcome:
        if task.image is None:
            return super()._materialize(task, patch, tree)
        return materialize_from_base(task, patch, tree, self.trees.get(task.image, task.workdir))

    def _run_task(self, task: Task, request: RunRequest) -> RunResult:
        if task.image is None:
            return super()._run_task(task, request)
        return self._run_fresh(request, image=task.image, workdir=task.workdir)

    # -- runs -----------------------------------------------------------------------------
    def _discard(self, job: Path) -> None:
        self._janitor.submit(shutil.rmtree, job, True)

    def _prepare_permissions(self, job: Path) -> None:
        readable_tree(job / "tree")
        _chmod(job, 0o755)
        _chmod(job / "out", 0o777)

    def _guest_request(self, request: RunRequest) -> dict:
        return {
            "workspace": self._in_guest(request.workspace),
            "out_dir": self._in_guest(request.out_dir),
            "tests": request.tests,
            "env": TEST_ENV,
            "nonce": request.nonce,
            "timeout_s": request.timeout_s,
            **request.guest_fields(),
        }

    def _in_guest(self, host_path: Path) -> str:
        return "/spool/" + str(host_path.relative_to(self._spool))

    def _run(self, request: RunRequest) -> RunResult:
        if self.mode == "fresh":
            return self._run_fresh(request)
        return self._run_warm(request)

    def _run_warm(self, request: RunRequest) -> RunResult:
        if self._server is None:
            self._start_server()
        guest = self._guest_request(request)
        return run_on_server(self._spool, guest, request.out_dir, request.wait_s, self)

    def alive(self) -> bool:
        return self._server is not None and self._alive(self._server)

    def restart(self) -> None:
        self._restart()

    def _run_fresh(
        self, request: RunRequest, image: str | None = None, workdir: str | None = None
    ) -> RunResult:
        """One container per grading; with ``image``, the tree is mounted at ``workdir``."""
        req_path = request.out_dir.parent / "request.json"
        guest = self._guest_request(request)
        kwargs = self._container_kwargs()
        if image is not None and workdir is not None:
            guest["workspace"] = workdir
            kwargs["image"] = image
            kwargs["entrypoint"] = []
            kwargs["volumes"][str(request.workspace)] = {"bind": workdir, "mode": "ro"}
        req_path.write_text(json.dumps(guest))
        _chmod(req_path, 0o644)
        container = self._client.containers.run(
            command=["python3", "/grader/runner.py", "once", self._in_guest(req_path)],
            **kwargs,
        )
        try:
            container.wait(timeout=request.wait_s + MARGIN_S)
        except Exception:
            return RunResult("sandbox_died", None, "container did not finish in time")
        finally:
            container.remove(force=True)
        return result_from_out_dir(request.out_dir)

    def _restart(self) -> None:
        if self._server is not None:
            remove_container(self._server)
        self._start_server()

    def close(self) -> None:
        self._janitor.shutdown(wait=True)
        if self._server is not None:
            (self._spool / "control" / "stop").touch()
        self._server = None
        if self._trees is not None:
            self._trees.close()
        self._finalizer()


def _chmod(path: Path, mode: int) -> None:
    os.chmod(path, mode)


def readable_tree(root: Path) -> None:
    """Directories 0755, files 0644 (0755 where the owner may execute); links untouched."""
    for dirpath, _dirs, files in os.walk(root):
        _chmod(Path(dirpath), 0o755)
        for name in files:
            path = Path(dirpath, name)
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode):
                _chmod(path, 0o755 if mode & stat.S_IXUSR else 0o644)


def remove_container(container) -> None:
    """Force-remove a container, ignoring every error (it may be gone already)."""
    with contextlib.suppress(Exception):
        container.remove(force=True)


def _cleanup(client, container_ids: list[str], spool: Path) -> None:
    for cid in container_ids:
        with contextlib.suppress(Exception):
            client.containers.get(cid).remove(force=True)
    shutil.rmtree(spool, ignore_errors=True)


def count_sandbox_containers(own: bool = False) -> int:
    """Containers (running or not) that carry the sandbox label; with ``own``, only those this
    process started (another job's on the same daemon come and go meanwhile)."""
    labels = [f"{k}={v}" for k, v in owned_labels(LABEL).items()] if own else [LABEL]
    return len(list_labelled(docker_client(), labels))
