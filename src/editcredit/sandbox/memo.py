"""Grade each (task, tree, selection) once: a content-addressed memo in front of a sandbox.

Grading is a function of the task, the patch and the tests selected (METHOD §6: the strict
verdicts read only what the tests did; nothing of the machine enters a stored report, see
:mod:`editcredit.grading.stored_report`). Rollouts of one group, the samples of one evaluation
slot, the experts' episodes and the counterfactual of a one-block episode reach the same trees
again and again; the memo runs the tests of each distinct tree once and hands every later caller
the same report.

Only reports of a run that finished inside its limits are kept: a run that timed out, died or
left no report says something about the machine at that moment, so the next caller grades
afresh (load never turns a correct patch into a failure for every later sample). Concurrent
callers of one key wait for the first one's grading instead of running the tests twice.

The experts' corpus of a base (``keep_timeouts``) also keeps a run whose tests hit their time
limits: a candidate fix that makes a loop run forever is met again by every episode of its
task, and would cost its limits each time; a run that died or left no report is never kept.

The agent's own test runs (:meth:`GradingMemo.observe`, the ``run`` action on its visible
tests) keep such runs too: they are observations, never a grade, reward or score, and a
looping candidate tried by every sample of a task cost its limits (about 15 s) each time: in
``benchmarks/bench_eval_slots.py`` (16 holdout tasks x 4 samples) 31 such runs took about
three quarters of the wall time. Observations and gradings are keyed apart, so a kept
observation never answers a grading of the same tree.

With a :class:`~editcredit.sandbox.report_store.ReportStore` the memo also reads the reports
other jobs kept on disk and keeps its own there (the same rule decides what is kept): the jobs
of a study meet the same trees again, and each distinct grading then runs once per study (jobs
that meet a key at the same time wait for the one that grades it, through the store's marks).
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import Future
from typing import Any

from editcredit.data.task import Task
from editcredit.sandbox.base import SandboxReport, grade_selected
from editcredit.sandbox.report_store import ReportStore

__all__ = ["GradingMemo", "grading_key", "reusable"]

TASK_HASHES_KEPT = 4096  # tasks whose hash a memo keeps (an episode's views, a job's tasks)


def grading_key(
    task: Task, patch: str, select: list[str] | None, task_sha256: str | None = None
) -> tuple[str, ...]:
    """What a grading is a function of: the task (its canonical hash covers the tree, the test
    files and the tests it expects: a visible view of a task expects fewer), the patch and the
    selection of tests. ``task_sha256``: the task's hash where the caller has it already."""
    digest = task_sha256 or task.sha256()
    return (digest, hashlib.sha256(patch.encode()).hexdigest(), "\0".join(select or ()))


def reusable(report: SandboxReport, keep_timeouts: bool = False) -> bool:
    """A report any later grading of the same key would reproduce: the run finished (or the
    patch did not apply, so nothing ran) with no test or collection timeout; with
    ``keep_timeouts`` also a run that finished or stopped on its time limits."""
    if keep_timeouts and report.run_status in ("finished", "timeout"):
        return True
    return (
        report.run_status in ("finished", "not_run")
        and not report.timeouts
        and report.collect_timeout is None
    )


class GradingMemo:
    """A sandbox (or pool) that grades each distinct key once; other attributes pass through.

    ``hits`` counts gradings answered from the memo, ``misses`` the ones that reached the
    sandbox (what a budget counts), ``stored`` those read from the ``store``.
    ``keep_timeouts``: reports of runs stopped by their time limits are kept too (the experts'
    corpus only, see the module's doc). ``store``: reports kept on disk across jobs; the sandbox
    must then tell a task's limits (``limits_for``), which are part of a stored report's key."""

    def __init__(
        self, sandbox: Any, keep_timeouts: bool = False, store: ReportStore | None = None
    ) -> None:
        self.sandbox = sandbox
        self.keep_timeouts = keep_timeouts
        self.store = store
        self.hits = 0
        self.misses = 0
        self.stored = 0
        self._done: dict[tuple[str, ...], SandboxReport] = {}
        self._running: dict[tuple[str, ...], Future] = {}
        self._lock = threading.Lock()
        # each task object's canonical hash, computed once (a frozen model; the entry holds the
        # task, so its id is not reused): an episode asks for the same task at every test run
        self._task_hashes: dict[int, tuple[Task, str]] = {}

    def _task_sha256(self, task: Task) -> str:
        known = self._task_hashes.get(id(task))
        if known is not None and known[0] is task:
            return known[1]
        digest = task.sha256()
        if len(self._task_hashes) >= TASK_HASHES_KEPT:  # a long job's memo stays small
            self._task_hashes.clear()
        self._task_hashes[id(task)] = (task, digest)
        return digest

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        """A grading: reused only when any later grading would reproduce it (``reusable``)."""
        return self._answer(
            ("grade", *grading_key(task, patch, select, self._task_sha256(task))),
            task,
            patch,
            select,
            self.keep_timeouts,
        )

    def observe(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        """The agent's own test run: also kept when its tests hit their time limits (an
        observation decides no grade; see the module's doc). Keyed apart from gradings."""
        return self._answer(
            ("observe", *grading_key(task, patch, select, self._task_sha256(task))),
            task,
            patch,
            select,
            True,
        )

    def _answer(
        self,
        key: tuple[str, ...],
        task: Task,
        patch: str,
        select: list[str] | None,
        keep_timeouts: bool,
    ) -> SandboxReport:
        with self._lock:
            if key in self._done:
                self.hits += 1
                return self._done[key]
            waiting = self._running.get(key)
            if waiting is None:
                mine: Future = Future()
                self._running[key] = mine
        if waiting is not None:
            report = waiting.result()
            if reusable(report, keep_timeouts):
                with self._lock:
                    self.hits += 1
                return report
            return self._answer(key, task, patch, select, keep_timeouts)  # grade afresh
        try:
            report, graded = self._stored_or_graded(key[0], task, patch, select, keep_timeouts)
        except BaseException as exc:
            with self._lock:
                del self._running[key]
            mine.set_exception(exc)
            raise
        with self._lock:
            self.misses += graded
            self.stored += not graded
            del self._running[key]
            if reusable(report, keep_timeouts):
                self._done[key] = report
        mine.set_result(report)
        return report

    def counts(self) -> dict[str, int]:
        """How the gradings were answered: run in the sandbox, read from the store, or answered
        in memory (the machine's and the store's state decide these, never a report)."""
        return {"run": self.misses, "read_from_store": self.stored, "answered_in_memory": self.hits}

    def _stored_or_graded(
        self, kind: str, task: Task, patch: str, select: list[str] | None, keep_timeouts: bool
    ) -> tuple[SandboxReport, bool]:
        """The store's report of this run, else a grading (kept in the store when reusable);
        True when the sandbox graded."""
        if self.store is None:
            return grade_selected(self.sandbox, task, patch, select), True
        limits = self.sandbox.limits_for(task)
        kept = f"{kind}, timeouts kept" if keep_timeouts else kind  # what may answer whom
        key = self.store.key(kept, self._task_sha256(task), patch, select, limits)
        with self.store.first_or_wait(key) as stored:
            if stored is not None:
                return stored, False
            report = grade_selected(self.sandbox, task, patch, select)
            if reusable(report, keep_timeouts):
                self.store.put(key, report)
            return report, True

    def close(self) -> None:
        self.sandbox.close()

    def __getattr__(self, name: str) -> Any:  # gold_times, workers, map, ... of the wrapped one
        return getattr(self.sandbox, name)
