"""The one sandbox interface: ``grade(task, patch) -> SandboxReport`` (observation only)."""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from editcredit.data.task import Task
from editcredit.sandbox.limits import (
    GoldTimes,
    GoldTimesBook,
    LimitSettings,
    per_test_limits,
    run_budget_s,
)
from editcredit.sandbox.observations import ItemObservation, Observations, read_observations
from editcredit.sandbox.patches import PatchFormatError, split_patch
from editcredit.sandbox.runners import command_for, rerun_fields
from editcredit.sandbox.sentinels import Sentinels, make_sentinels
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


class TestTimeout(BaseModel):
    """A test item killed at its own limit, and whether a rerun of it alone did the same.

    ``seconds`` and ``limit_s`` are its wall clock; with a CPU-time limit, ``cpu_s`` and
    ``cpu_limit_s`` are its CPU seconds and ``limited_by`` names the limit it passed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    __test__ = False  # not a pytest class
    nodeid: str
    index: int
    seconds: float
    limit_s: float
    reproduced: bool = False
    rerun: str = ""
    cpu_s: float | None = None
    cpu_limit_s: float | None = None
    limited_by: Literal["wall", "cpu"] = "wall"


class CollectTimeout(BaseModel):
    """Collection (imports of the tests and the code under test) exceeded its limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    seconds: float
    limit_s: float = 0.0
    reproduced: bool = False


class SandboxReport(BaseModel):
    """What a sandbox observed for one (task, patch). Judging is the grader's job.

    ``observations`` holds the task's items only; the grader's sentinel tests are in
    ``sentinel_items`` (``sentinels``: node id -> 'must_pass' | 'must_fail'). ``timeouts`` and
    ``collect_timeout`` come from the runner outside the test process; ``timings`` are the
    runner's clock (collection and per-item seconds), ``limits`` what the run was held to.
    """

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
    sentinels: dict[str, str] = {}
    sentinel_items: list[ItemObservation] = []
    timeouts: list[TestTimeout] = []
    collect_timeout: CollectTimeout | None = None
    timings: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunRequest:
    """One test run: where the tree is (host path), which test files, the limits.

    ``limits`` are the per-test limits of the guest request (None: the whole-run limit only,
    as for a gold run that measures); ``budget_s`` caps everything, reruns included."""

    workspace: Path
    out_dir: Path
    tests: list[str]
    timeout_s: float
    nonce: str
    limits: dict[str, Any] | None = None
    sentinel: dict[str, Any] | None = None
    budget_s: float = 0.0
    patched: tuple[str, ...] = ()
    runner: str = "pytest"
    command: tuple[str, ...] = ()
    rerun: dict[str, Any] | None = None

    @property
    def wait_s(self) -> float:
        return max(self.timeout_s, self.budget_s)

    def guest_fields(self) -> dict[str, Any]:
        """The limit and sentinel fields of the guest runner's request."""
        out: dict[str, Any] = {"budget_s": self.wait_s, "patched": list(self.patched)}
        if self.runner != "pytest":
            out["runner"] = self.runner
            out["command"] = list(self.command)
            out["rerun"] = self.rerun
        if self.limits is not None:
            out["limits"] = self.limits
        if self.sentinel is not None:
            out["sentinel"] = self.sentinel
        return out


@dataclass(frozen=True)
class RunResult:
    status: RunStatus
    exit_code: int | None
    log_tail: str
    timeouts: list[dict[str, Any]] = field(default_factory=list)
    collect_timeout: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None


class Sandbox(ABC):
    """Base class: builds the workspace on the host, lets a backend run the tests."""

    name: str = "abstract"
    isolation: str = ""

    def __init__(
        self,
        timeout_factor: float,
        scratch: Path | None,
        limits: LimitSettings,
        gold_times: GoldTimesBook | None = None,
    ) -> None:
        """``timeout_factor`` and ``limits`` are ``sandbox.timeout_factor`` and
        ``sandbox.test_limits`` of the typed settings (config/schema.yaml holds their defaults;
        :func:`editcredit.sandbox.factory.make_sandbox` passes them); ``scratch``: where
        workspaces are built (None: the system's temporary directory)."""
        self.timeout_factor = timeout_factor
        self._scratch = Path(scratch or tempfile.gettempdir())
        self.limit_settings = limits
        self.gold_times = gold_times if gold_times is not None else GoldTimesBook()

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        """Apply ``patch`` to ``task``'s tree, run its test files (or only the node ids in
        ``select``: the agent's visible tests) with the grader's sentinels and per-test limits
        from the task's gold times, return the observations.

        A task whose gold times are not known yet is first run against the floors alone: every
        limit its gold times could give is at least its floor, so a run in which no test and no
        collection reached a floor (``within_floors``) is the run those limits would have
        given. Only a run that reached one (or did not finish) times the task with one gold run
        and is run again under the limits its times give."""
        if self._gold_unknown(task):
            settings = self.limit_settings
            report = self._grade(
                task, patch, per_test_limits(None, settings, self.timeout_factor), select
            )
            if within_floors(report):
                return report
        return self._grade(task, patch, self.limits_for(task), select)

    def _gold_unknown(self, task: Task) -> bool:
        """The task's limits would take a gold run of this sandbox's own (``limits_for``)."""
        return self.limit_settings.measure_gold and not self.gold_times.known(task.instance_id)

    def limits_for(self, task: Task) -> dict[str, Any]:
        """Per-test limits of ``task``: from its recorded gold times, else measured now with
        one gold run (``test_limits.measure_gold``), else the floors."""
        settings = self.limit_settings
        if not self.gold_times.known(task.instance_id) and settings.measure_gold:
            self.measure_gold(task)
        times = self.gold_times.get(task.instance_id)
        return per_test_limits(times, settings, self.timeout_factor)

    def measure_gold(self, task: Task) -> SandboxReport:
        """Run the gold patch held to the whole-run limit only and record its times (the
        control rule's gold control is this run)."""
        report = self._grade(task, task.patch, None)
        finished = report.run_status == "finished" and report.observations.finished
        times = GoldTimes.from_timings(report.timings) if finished else None
        self.gold_times.put(task.instance_id, times)
        return report

    def _grade(
        self,
        task: Task,
        patch: str,
        limits: dict[str, Any] | None,
        select: list[str] | None = None,
    ) -> SandboxReport:
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
            sentinels = make_sentinels(nonce, list(task.test_paths), task.test_runner)
            write_sentinels(tree, sentinels)
            self._prepare_permissions(job)
            timeout_s = task.timeout_s * self.timeout_factor
            command = () if task.test_runner == "pytest" else tuple(command_for(task, select))
            request = RunRequest(
                tree,
                out,
                [*(select or task.test_paths), sentinels.path],
                timeout_s,
                nonce,
                limits=limits,
                sentinel=sentinels.guest(),
                budget_s=run_budget_s(timeout_s, limits),
                patched=patched_paths(patch, {*outcome.dropped_paths, *task.test_paths}),
                runner=task.test_runner,
                command=command,
                rerun=rerun_fields(task),
            )
            result = self._run_task(task, request)
            observations = read_observations(out / "observations.jsonl", nonce)
            status = result.status
            if status == "finished" and not observations.started:
                status = "no_report"
            report = self._report(
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
            return with_run_details(report, sentinels, result, limits)
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


def patched_paths(patch: str, restored: set[str]) -> tuple[str, ...]:
    """The tree paths a patch changed, less the ``restored`` ones (test files, dropped
    protected paths): code from them is checked in the test process."""
    try:
        paths = [p for section in split_patch(patch) for p in section.paths]
    except PatchFormatError:
        return ()
    return tuple(p for p in dict.fromkeys(paths) if p not in restored)


def write_sentinels(tree: Path, sentinels: Sentinels) -> None:
    path = tree / sentinels.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sentinels.source, encoding="utf-8")


def with_run_details(
    report: SandboxReport, sentinels: Sentinels, result: RunResult, limits: dict | None
) -> SandboxReport:
    """Move the sentinels' items out of the observations; add the runner's timeouts."""
    roles = sentinels.roles
    obs = report.observations
    task_items = [i for i in obs.items if i.nodeid not in roles]
    sentinel_items = [i for i in obs.items if i.nodeid in roles]
    timings = result.timings
    if timings is not None:
        tests = {k: v for k, v in (timings.get("tests") or {}).items() if k not in roles}
        timings = {**timings, "tests": tests}
    return report.model_copy(
        update={
            "observations": obs.model_copy(update={"items": task_items}),
            "sentinels": roles,
            "sentinel_items": sentinel_items,
            "timeouts": [TestTimeout(**t) for t in result.timeouts],
            "collect_timeout": (
                CollectTimeout(**result.collect_timeout) if result.collect_timeout else None
            ),
            "timings": timings,
            "limits": limits,
        }
    )


def result_from_out_dir(out_dir: Path) -> RunResult:
    """Read the guest runner's done.json (absent: the sandbox died before finishing)."""
    done_path = out_dir / "done.json"
    if not done_path.exists():
        return RunResult("sandbox_died", None, read_log_tail(out_dir))
    done = json.loads(done_path.read_text())
    status: RunStatus = "timeout" if done["status"] == "timeout" else "finished"
    return RunResult(
        status,
        done.get("exit_code"),
        read_log_tail(out_dir),
        timeouts=list(done.get("timeouts") or []),
        collect_timeout=done.get("collect_timeout"),
        timings=done.get("timings"),
    )


def read_log_tail(out_dir: Path, limit: int = 2000) -> str:
    log = out_dir / "pytest.log"
    if not log.exists():
        return ""
    return log.read_text(encoding="utf-8", errors="replace")[-limit:]


def observe_selected(sandbox, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
    """The agent's own test run: ``sandbox.observe`` where the sandbox tells observations from
    gradings (:class:`~editcredit.sandbox.memo.GradingMemo`), else a grading."""
    observe = getattr(sandbox, "observe", None)
    if observe is None:
        return grade_selected(sandbox, task, patch, select)
    return observe(task, patch, select or None)


def within_floors(report: SandboxReport) -> bool:
    """A run that no limit stopped: nothing ran (the patch did not apply), or the run finished
    with no test and no collection past its limit (a timeout that did not reproduce on a rerun
    alone included)."""
    if report.run_status == "not_run":
        return True
    return report.run_status == "finished" and not report.timeouts and not report.collect_timeout


def grade_selected(sandbox, task: Task, patch: str, select: list[str] | None) -> SandboxReport:
    """``sandbox.grade`` with a selection of node ids when there is one (wrappers pass it on;
    a sandbox that is never asked for a selection needs no such parameter)."""
    return sandbox.grade(task, patch, select) if select else sandbox.grade(task, patch)
