"""The one sandbox interface: ``grade(task, patch) -> SandboxReport`` (observation only)."""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from editcredit.data.task import Task
from editcredit.sandbox.observations import Observations, read_observations
from editcredit.sandbox.workspace import PatchOutcome, materialize

GUEST_DIR = Path(__file__).parent / "guest"
RunStatus = Literal["finished", "timeout", "sandbox_died", "no_report", "not_run"]

#: The complete, declared environment of every test process (METHOD §6).
TEST_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


class SandboxError(RuntimeError):
    """The sandbox cannot be used at all (no daemon, no image): a set-up problem."""


class SandboxReport(BaseModel):
    """What a sandbox observed for one (task, patch). Judging is the grader's job."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    backend: str
    isolation: str
    patch_applied: bool
    patch_error: str = ""
    dropped_paths: list[str] = []
    run_status: RunStatus
    observations: Observations
    exit_code: int | None = None
    seconds: float
    log_tail: str = ""


@dataclass(frozen=True)
class RunRequest:
    """One test run: where the tree is (host path), which test files, the limits."""

    workspace: Path
    out_dir: Path
    tests: list[str]
    timeout_s: float
    nonce: str


@dataclass(frozen=True)
class RunResult:
    status: RunStatus
    exit_code: int | None
    log_tail: str


class Sandbox(ABC):
    """Base class: builds the workspace on the host, lets a backend run the tests."""

    name: str = "abstract"
    isolation: str = ""

    def __init__(self, timeout_factor: float = 1.0, scratch: Path | None = None) -> None:
        self.timeout_factor = timeout_factor
        self._scratch = Path(scratch or tempfile.gettempdir())

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        """Apply ``patch`` to ``task``'s tree, run its test files (or only the node ids in
        ``select``: the agent's visible tests), return the observations."""
        start = time.monotonic()
        job = Path(tempfile.mkdtemp(prefix="job-", dir=self._job_root()))
        try:
            tree, out = job / "tree", job / "out"
            out.mkdir()
            outcome = self._materialize(task, patch, tree)
            if not outcome.applied:
                return self._report(
                    task,
                    start,
                    outcome.applied,
                    outcome.error,
                    outcome.dropped_paths,
                    "not_run",
                    Observations(started=False, finished=False),
                    None,
                    "",
                )
            nonce = secrets.token_hex(16)
            self._prepare_permissions(job)
            request = RunRequest(
                tree,
                out,
                list(select) if select else list(task.test_paths),
                task.timeout_s * self.timeout_factor,
                nonce,
            )
            result = self._run_task(task, request)
            observations = read_observations(out / "observations.jsonl", nonce)
            status = result.status
            if status == "finished" and not observations.started:
                status = "no_report"
            return self._report(
                task,
                start,
                True,
                "",
                outcome.dropped_paths,
                status,
                observations,
                result.exit_code,
                result.log_tail,
            )
        finally:
            self._discard(job)

    def _discard(self, job: Path) -> None:
        """Remove a finished job's directory (backends may defer it off the hot path)."""
        shutil.rmtree(job, ignore_errors=True)

    def _report(self, task, start, applied, error, dropped, status, obs, code, log):
        return SandboxReport(
            instance_id=task.instance_id,
            backend=self.name,
            isolation=self.isolation,
            patch_applied=applied,
            patch_error=error,
            dropped_paths=dropped,
            run_status=status,
            observations=obs,
            exit_code=code,
            seconds=round(time.monotonic() - start, 4),
            log_tail=log[-2000:],
        )

    def _job_root(self) -> Path:
        return self._scratch

    def _materialize(self, task: Task, patch: str, tree: Path) -> PatchOutcome:
        """Build the workspace ``tree`` (not yet existing); backends with other task sources
        (a per-instance image) override this."""
        if task.image is not None:
            raise SandboxError(
                f"task {task.instance_id} lives in the image {task.image}; the {self.name} "
                "backend cannot run images (sandbox.backend: docker)"
            )
        tree.mkdir()
        return materialize(task, patch, tree)

    def _run_task(self, task: Task, request: RunRequest) -> RunResult:
        """Run ``task``'s tests on the prepared workspace (a per-instance image overrides)."""
        return self._run(request)

    def _prepare_permissions(self, job: Path) -> None:  # noqa: B027 - optional hook
        """Hook for backends whose test process runs as another user."""

    @abstractmethod
    def _run(self, request: RunRequest) -> RunResult:
        """Run the tests of a prepared workspace; never raise for a test-side failure."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release every resource (containers, processes). Idempotent."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def result_from_out_dir(out_dir: Path) -> RunResult:
    """Read the guest runner's done.json (absent: the sandbox died before finishing)."""
    done_path = out_dir / "done.json"
    if not done_path.exists():
        return RunResult("sandbox_died", None, read_log_tail(out_dir))
    done = json.loads(done_path.read_text())
    status = "timeout" if done["status"] == "timeout" else "finished"
    return RunResult(status, done.get("exit_code"), read_log_tail(out_dir))


def read_log_tail(out_dir: Path, limit: int = 2000) -> str:
    log = out_dir / "pytest.log"
    if not log.exists():
        return ""
    return log.read_text(encoding="utf-8", errors="replace")[-limit:]


def grade_selected(sandbox, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
    """``sandbox.grade`` with a selection of node ids when there is one (wrappers pass it on;
    a sandbox that is never asked for a selection needs no such parameter)."""
    return sandbox.grade(task, patch, select) if select else sandbox.grade(task, patch)
