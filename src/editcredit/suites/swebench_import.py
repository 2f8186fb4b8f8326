"""Import SWE-bench-format tasks from JSONL or Parquet, validating every row.

Rows carry SWE-bench's fields (``instance_id``, ``repo``, ``base_commit``,
``problem_statement``, ``patch``, ``test_patch``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``); the two
id lists may be JSON-encoded strings, as in the published datasets. A row names its docker
image in ``image`` or gets one from ``image_template`` (e.g. ``"sweb.eval.x86_64.{instance_id}"``).
Test paths come from ``test_paths`` or, when absent, from the files the test_patch touches.
A row may name its ``test_runner`` and ``test_command`` (a JSON list); rows of ``django/django``
and ``sympy/sympy`` that name none get SWE-bench's runner and command for that repository
(:data:`REPO_RUNNERS`). An unknown runner is an error naming the row and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from editcredit.data.freeze import FrozenSuiteError, task_from_record
from editcredit.data.task import Task
from editcredit.sandbox.patches import PatchFormatError, split_patch

KNOWN = set(Task.model_fields)
LIST_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "test_paths", "test_command")
#: The runner and command of SWE-bench's per-repository specifications, for rows that name
#: none (a row's own ``test_runner`` / ``test_command`` win).
REPO_RUNNERS: dict[str, tuple[str, list[str]]] = {
    "django/django": (
        "django",
        ["./tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1"],
    ),
    "sympy/sympy": ("sympy", ["bin/test", "-C", "--verbose"]),
}


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise FrozenSuiteError(f"{path}: no such file")
    if path.suffix == ".parquet":
        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:
            raise FrozenSuiteError(f"{path}: not a readable Parquet file: {exc}") from exc
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FrozenSuiteError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise FrozenSuiteError(f"{path}: line {n}: not a JSON object")
        rows.append(row)
    return rows


def _normalise(
    row: dict[str, Any], where: str, suite: str, image_template: str, timeout_s: float
) -> dict[str, Any]:
    record = {k: v for k, v in row.items() if k in KNOWN}
    extra = {k: v for k, v in row.items() if k not in KNOWN}
    for name in LIST_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            try:
                record[name] = json.loads(value)
            except json.JSONDecodeError:
                raise FrozenSuiteError(f"{where}: field {name}: not a JSON list") from None
    if "test_paths" not in record and record.get("test_patch"):
        try:
            sections = split_patch(record["test_patch"])
        except PatchFormatError as exc:
            raise FrozenSuiteError(f"{where}: field test_patch: {exc}") from None
        record["test_paths"] = sorted({p for s in sections for p in s.paths})
    if "test_runner" not in record and record.get("repo") in REPO_RUNNERS:
        runner, command = REPO_RUNNERS[record["repo"]]
        record["test_runner"] = runner
        record.setdefault("test_command", command)
    if "image" not in record and "files" not in record and image_template:
        record["image"] = image_template.format(**{**row, **record})
    record.setdefault("suite", suite)
    record.setdefault("timeout_s", timeout_s)
    meta = dict(record.get("meta") or {})
    meta.update({k: v for k, v in extra.items() if isinstance(v, str | int | float | bool)})
    record["meta"] = meta
    return record


def import_tasks(path: str | Path, suite: str, image_template: str, timeout_s: float) -> list[Task]:
    """Every row as a validated Task; the first bad row raises, naming row and field."""
    path = Path(path)
    tasks, seen = [], set()
    for i, row in enumerate(read_rows(path)):
        where = f"{path}: row {i}"
        task = task_from_record(_normalise(row, where, suite, image_template, timeout_s), where)
        if task.instance_id in seen:
            raise FrozenSuiteError(f"{where}: field instance_id: duplicate {task.instance_id!r}")
        seen.add(task.instance_id)
        tasks.append(task)
    return tasks
