"""Sandbox wrappers of evaluation: counting, recording in-episode failures, injecting faults.

Each passes both kinds of call on: ``grade`` (a grading) and ``observe`` (the agent's own test
run, which the grading memo keeps even when it hit its time limits; see
:mod:`editcredit.sandbox.memo`).

- :class:`CountingSandbox` counts the test runs that reach the sandbox (a model whose patches
  are all empty must make none).
- :class:`EpisodeSandbox` stands between one episode's environment and the sandbox and keeps
  every infrastructure failure of the episode's own test runs: such an episode is a generation
  that failed before its patch existed.
- :class:`FaultySandbox` turns a deterministic fraction of test runs into infrastructure
  failures (a died sandbox, or a raised :class:`SandboxError`): the fault test and the
  ``evaluation.faults`` setting.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from typing import Any

from editcredit.data.task import Task
from editcredit.io.hashing import sha256_text
from editcredit.sandbox.base import SandboxError, SandboxReport, observe_selected
from editcredit.sandbox.base import grade_selected as forward
from editcredit.sandbox.observations import Observations

try:  # the docker SDK raises its own exception types
    from docker.errors import DockerException
except ImportError:  # pragma: no cover - a dependency of the package
    DockerException = SandboxError

#: Exceptions from a sandbox or an accelerator that are infrastructure, not a bug of ours.
INFRA_ERRORS: tuple[type[BaseException], ...] = (
    SandboxError,
    OSError,
    MemoryError,
    TimeoutError,
    DockerException,
)


def died_report(task: Task, message: str) -> SandboxReport:
    """What a died sandbox reports: the run never finished, nothing was observed."""
    return SandboxReport(
        instance_id=task.instance_id,
        backend="unknown",
        isolation="",
        patch_applied=True,
        run_status="sandbox_died",
        observations=Observations(started=False, finished=False),
        seconds=0.0,
        log_tail=message[-2000:],
    )


def is_infra(report: SandboxReport) -> bool:
    """The grader's rule: the patch applied but the run did not finish."""
    return report.patch_applied and report.run_status != "finished"


class PassesCalls:
    """A wrapper's two kinds of call, each handed to its ``_run`` with the function that
    passes it on to the wrapped sandbox."""

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        return self._run(forward, task, patch, select)

    def observe(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        return self._run(observe_selected, task, patch, select)

    def _run(self, call, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
        raise NotImplementedError


class CountingSandbox(PassesCalls):
    """Counts ``grade`` calls; quacks like a Sandbox."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        self._lock = threading.Lock()

    def _run(self, call, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
        with self._lock:
            self.calls += 1
        return call(self.inner, task, patch, select)


class EpisodeSandbox(PassesCalls):
    """One episode's view of the sandbox: records infrastructure failures of its test runs.

    A raised infrastructure error becomes a died-sandbox report for the environment (the agent
    sees a failed test run, as it would from a died container) and is kept as evidence.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.runs = 0
        self.failures: list[dict[str, Any]] = []

    def _run(self, call, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
        self.runs += 1
        try:
            report = call(self.inner, task, patch, select)
        except INFRA_ERRORS as exc:
            self.failures.append({"run": self.runs, "exception": repr(exc)[-2000:]})
            return died_report(task, repr(exc))
        if is_infra(report):
            self.failures.append(
                {
                    "run": self.runs,
                    "run_status": report.run_status,
                    "exit_code": report.exit_code,
                    "log_tail": report.log_tail[-500:],
                }
            )
        return report


class FaultySandbox(PassesCalls):
    """Fails a fraction ``rate`` of test runs, deterministically by seed.

    Whether a run fails depends on (seed, task, patch, how many times this wrapper has run that
    task with that patch), not on thread timing. ``mode`` 'report' returns a died-sandbox
    report, 'raise' raises :class:`SandboxError`, 'mixed' picks one of the two by the same hash.
    """

    def __init__(self, inner, rate: float, seed: int, mode: str) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be in [0, 1], got {rate}")
        if mode not in ("report", "raise", "mixed"):
            raise ValueError(f"fault mode must be report, raise or mixed, got {mode!r}")
        self.inner, self.rate, self.seed, self.mode = inner, rate, seed, mode
        self.injected = 0
        self.passed = 0
        self._seen: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def _draw(self, task: Task, patch: str) -> float:
        digest = sha256_text(patch)
        with self._lock:
            key = (task.instance_id, digest)
            self._seen[key] += 1
            nth = self._seen[key]
        h = hashlib.sha256(f"{self.seed}|{task.instance_id}|{digest}|{nth}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64

    def _run(self, call, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
        u = self._draw(task, patch)
        if u < self.rate:
            with self._lock:
                self.injected += 1
            raising = self.mode == "raise" or (self.mode == "mixed" and u < self.rate / 2)
            if raising:
                raise SandboxError(f"injected fault (seed {self.seed}): sandbox unreachable")
            return died_report(task, f"injected fault (seed {self.seed}): sandbox died")
        with self._lock:
            self.passed += 1
        return call(self.inner, task, patch, select)
