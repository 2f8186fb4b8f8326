"""Sandbox reports kept on disk, shared by every job of a study: each distinct grading once.

A grading is a function of the task, the patch, the tests selected, the limits the run is held
to and the grader itself (METHOD §6). :class:`~editcredit.sandbox.memo.GradingMemo` already
grades each distinct key once within a job; the jobs of a study meet the same trees again: every
arm and seed trains on the same screened pool, the controls replay it, and every model of an
evaluation tries the same candidate fixes of the same tasks. The store keeps the reports the
memo would keep (a run that finished inside its limits; for the agent's own observations also
one stopped by its limits) so a later job reads the report instead of running the tests again.

It is a cache, not a result: deleting it changes no output, only how long a study takes. An
entry's name is the SHA-256 of everything the report is a function of:

- the grader's identity (:func:`store_identity`): the backend, its image by id and the
  versions inside it, the SHA-256 of the host and guest code that make a report and judge it
  (:mod:`editcredit.grading.grader_identity`), and the container's memory and process limits;
- the kind of run (a grading or the agent's observation, kept apart as in the memo);
- the task's canonical hash (its tree, tests and expectations), the patch and the selection;
- the per-test limits of the run (from the task's recorded gold times and the limit settings).

Entries are written once, atomically (a temporary file, then a rename), so two jobs that grade
the same key at once leave one whole entry; a job grading a key marks it as running
(:mod:`~editcredit.sandbox.in_flight`) and jobs that meet it meanwhile wait for its entry.
An entry that cannot be read as a report is an error that names the file: the store holds
nothing half-written, so it was changed by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from editcredit.sandbox import in_flight
from editcredit.sandbox.base import SandboxError, SandboxReport

__all__ = [
    "ReportStore",
    "ReportStoreError",
    "absolute_store",
    "open_report_store",
    "store_identity",
]

STORE_FIELDS = ("mem_limit", "pids_limit", "timeout_factor")


class ReportStoreError(SandboxError):
    """A store entry that is not a report."""


def store_identity(sandbox_cfg: Mapping[str, Any], grader: Mapping[str, Any]) -> dict[str, Any]:
    """What a report depends on besides its task, patch, selection and limits: the grader
    (:func:`~editcredit.grading.grader_identity.grader_identity`: backend, image by id, versions,
    the host and guest code that make a report) and the container's limits."""
    return {**grader, **{name: sandbox_cfg[name] for name in STORE_FIELDS}}


def open_report_store(
    sandbox_cfg: Mapping[str, Any], grader: Mapping[str, Any]
) -> ReportStore | None:
    """The store ``sandbox.report_store`` names (relative to the working directory) for the
    grader ``grader``, or None where it is empty (every job grades on its own). Jobs open it
    through :func:`editcredit.grading.grader_identity.study_report_store`."""
    root = str(sandbox_cfg.get("report_store") or "")
    if not root:
        return None
    return ReportStore(Path(root).resolve(), store_identity(sandbox_cfg, grader))


def absolute_store(sandbox_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """``sandbox_cfg`` with its store named by an absolute path, for workers that may run in
    another working directory (Ray actors)."""
    root = str(sandbox_cfg.get("report_store") or "")
    return {**sandbox_cfg, "report_store": str(Path(root).resolve()) if root else ""}


class ReportStore:
    """Reports under ``root``, one JSON file per key, for one grader (``identity``)."""

    def __init__(self, root: str | Path, identity: dict[str, Any]) -> None:
        self.root = Path(root)
        self.identity = identity
        self._grader = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        self.reads = 0
        self.writes = 0

    def key(
        self,
        kind: str,
        task_sha256: str,
        patch: str,
        select: list[str] | None,
        limits: dict[str, Any],
    ) -> str:
        body = {
            "grader": self._grader,
            "kind": kind,
            "task": task_sha256,
            "patch": hashlib.sha256(patch.encode()).hexdigest(),
            "select": list(select or ()),
            "limits": limits,
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> SandboxReport | None:
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            report = SandboxReport.model_validate_json(text)
        except ValidationError as exc:
            raise ReportStoreError(
                f"grading store entry {path} is not a sandbox report ({exc.error_count()} "
                "error(s)); the store is written whole, so this file was changed: delete it "
                "(the store is a cache) and run again"
            ) from exc
        self.reads += 1
        return report

    def first_or_wait(self, key: str) -> AbstractContextManager[SandboxReport | None]:
        """The entry of ``key``, waiting while another job grades it (:mod:`in_flight`); None:
        this job grades it, marked as running until the block ends."""
        mark = self.path(key).with_suffix(".running")
        return in_flight.first_or_wait(mark, lambda: self.get(key))

    def put(self, key: str, report: SandboxReport) -> None:
        """Keep ``report`` under ``key`` unless an entry is there (never overwritten)."""
        path = self.path(key)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".part", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(report.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.writes += 1
