"""Freeze a suite: ``tasks.parquet`` plus ``manifest.json`` (SHA256 of the file and of each
task's canonical JSON). Reading back validates every row and names the bad row and field."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from editcredit.data.task import RUNNERS, Task, canonical_json
from editcredit.io.atomic import atomic_write_text
from editcredit.io.hashing import sha256_text
from editcredit.io.provenance import sha256_file

SCHEMA_VERSION = 2  # 2: statement_test (the one visible FAIL_TO_PASS test)
#: 3: the runner columns, written only by a suite with a task whose tests are not pytest's
RUNNER_SCHEMA_VERSION = 3
#: 4: the ``bugs`` column, written only by a suite with a multi-bug task
BUGS_SCHEMA_VERSION = 4
JSON_COLUMNS = ("files", "meta")
#: Read back as JSON text too (a column only suites with multi-bug tasks have).
BUGS_COLUMN = "bugs"

#: The Parquet schema of a frozen suite (nested values that vary by task are JSON text).
PARQUET_SCHEMA = pa.schema(
    [
        ("instance_id", pa.string()),
        ("repo", pa.string()),
        ("base_commit", pa.string()),
        ("problem_statement", pa.string()),
        ("patch", pa.string()),
        ("test_patch", pa.string()),
        ("FAIL_TO_PASS", pa.list_(pa.string())),
        ("PASS_TO_PASS", pa.list_(pa.string())),
        ("statement_test", pa.string()),
        ("test_paths", pa.list_(pa.string())),
        ("files", pa.string()),
        ("image", pa.string()),
        ("workdir", pa.string()),
        ("timeout_s", pa.float64()),
        ("suite", pa.string()),
        ("split", pa.string()),
        ("meta", pa.string()),
        ("task_sha256", pa.string()),
    ]
)
#: The runner columns (schema version 3).
RUNNER_COLUMNS = [("test_runner", pa.string()), ("test_command", pa.list_(pa.string()))]


def uses_runners(tasks: list[Task]) -> bool:
    """Does any task run its tests other than with pytest's default command?"""
    return any(t.test_runner != "pytest" or t.test_command for t in tasks)


def has_bugs(tasks: list[Task]) -> bool:
    """Does any task plant several bugs (a ``bugs`` record)?"""
    return any(t.bugs is not None for t in tasks)


def parquet_schema(tasks: list[Task]) -> pa.Schema:
    """The fixed schema, plus the runner columns where a task needs them (a pytest-only
    suite's bytes are those it had before runners existed) and the ``bugs`` column (JSON
    text) where a task plants several bugs."""
    if not uses_runners(tasks) and not has_bugs(tasks):
        return PARQUET_SCHEMA
    fields = list(PARQUET_SCHEMA)
    extra = [pa.field(n, t) for n, t in RUNNER_COLUMNS] if uses_runners(tasks) else []
    if has_bugs(tasks):
        extra.append(pa.field(BUGS_COLUMN, pa.string()))
    return pa.schema(fields[:-1] + extra + fields[-1:])


def schema_version(tasks: list[Task]) -> int:
    if has_bugs(tasks):
        return BUGS_SCHEMA_VERSION
    return RUNNER_SCHEMA_VERSION if uses_runners(tasks) else SCHEMA_VERSION


class FrozenSuiteError(ValueError):
    """A frozen file is malformed or does not match its pinned identity."""


def _row(task: Task, runners: bool, bugs: bool = False) -> dict[str, Any]:
    data = task.model_dump(mode="json")
    if not runners:
        for name, _type in RUNNER_COLUMNS:
            del data[name]
    for column in JSON_COLUMNS:
        data[column] = None if data[column] is None else canonical_json(data[column])
    if bugs:
        value = data.get(BUGS_COLUMN)
        data[BUGS_COLUMN] = None if value is None else canonical_json(value)
    data["task_sha256"] = task.sha256()
    return data


def write_parquet(tasks: list[Task], path: Path) -> None:
    """Deterministic bytes: fixed schema, no pandas metadata, fixed row group and codec."""
    runners, bugs = uses_runners(tasks), has_bugs(tasks)
    table = pa.Table.from_pylist(
        [_row(t, runners, bugs) for t in tasks], schema=parquet_schema(tasks)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            row_group_size=max(1, len(tasks)),
            write_statistics=False,
            store_schema=False,
        )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def manifest_for(
    tasks: list[Task], parquet: Path, suite: str, generator: dict[str, Any]
) -> dict[str, Any]:
    return {
        "schema_version": schema_version(tasks),
        "suite": suite,
        "generator": generator,
        "n_tasks": len(tasks),
        "splits": dict(sorted(Counter(t.split for t in tasks).items())),
        "tasks_parquet_sha256": sha256_file(parquet),
        "tasks": {t.instance_id: t.sha256() for t in tasks},
    }


def manifest_text(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def freeze(
    tasks: list[Task],
    out_dir: Path,
    suite: str,
    generator: dict[str, Any],
    expected_manifest_sha256: str | None,
) -> str:
    """Write tasks.parquet and manifest.json; return the manifest's SHA256.

    With a pinned ``expected_manifest_sha256`` that differs, nothing is left behind and
    FrozenSuiteError names both hashes.
    """
    for task in tasks:  # a task copied without validation still cannot freeze an unknown runner
        if task.test_runner not in RUNNERS:
            raise FrozenSuiteError(
                f"suite {suite}: task {task.instance_id}: field test_runner: unknown test "
                f"runner {task.test_runner!r} (one of {', '.join(RUNNERS)})"
            )
    ids = [t.instance_id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = sorted(i for i, n in Counter(ids).items() if n > 1)
        raise FrozenSuiteError(f"suite {suite}: duplicate instance ids {dup[:5]}")
    tasks = sorted(tasks, key=lambda t: t.instance_id)
    parquet = out_dir / "tasks.parquet"
    write_parquet(tasks, parquet)
    text = manifest_text(manifest_for(tasks, parquet, suite, generator))
    digest = sha256_text(text)
    if expected_manifest_sha256 and digest != expected_manifest_sha256:
        parquet.unlink(missing_ok=True)
        raise FrozenSuiteError(
            f"suite {suite}: manifest SHA256 {digest} differs from the pinned "
            f"{expected_manifest_sha256} (config suites.{suite}.manifest_sha256); a changed "
            "suite is a new version: pin the new hash deliberately"
        )
    atomic_write_text(out_dir / "manifest.json", text)
    return digest


def load_tasks(
    path: str | Path, verify_manifest: bool = True, pinned_manifest_sha256: str = ""
) -> list[Task]:
    """Read a frozen tasks.parquet, validating every row (errors name the row and field).

    With ``verify_manifest`` and a manifest.json beside it, the file's SHA256 and each task's
    hash must match the manifest.
    """
    path = Path(path)
    if not path.exists():
        raise FrozenSuiteError(f"{path}: no such file")
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:
        raise FrozenSuiteError(f"{path}: not a readable Parquet file: {exc}") from exc
    manifest_path = path.parent / "manifest.json"
    manifest = None
    if pinned_manifest_sha256:
        actual_manifest = sha256_file(manifest_path) if manifest_path.exists() else "(missing)"
        if actual_manifest != pinned_manifest_sha256:
            raise FrozenSuiteError(
                f"{manifest_path}: SHA256 {actual_manifest} differs from the pinned "
                f"{pinned_manifest_sha256}"
            )
    if verify_manifest and manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        actual = sha256_file(path)
        if manifest.get("tasks_parquet_sha256") != actual:
            raise FrozenSuiteError(
                f"{path}: SHA256 {actual} differs from {manifest_path} "
                f"({manifest.get('tasks_parquet_sha256')})"
            )
    tasks = []
    for i, row in enumerate(rows):
        stored = row.pop("task_sha256", None)
        task = task_from_record(row, f"{path}: row {i}", json_columns=JSON_COLUMNS + (BUGS_COLUMN,))
        if stored is not None and stored != task.sha256():
            raise FrozenSuiteError(f"{path}: row {i} ({task.instance_id}): task_sha256 mismatch")
        if manifest is not None and manifest["tasks"].get(task.instance_id) != task.sha256():
            raise FrozenSuiteError(
                f"{path}: row {i} ({task.instance_id}): not in the manifest with this hash"
            )
        tasks.append(task)
    return tasks


def task_from_record(
    record: dict[str, Any], where: str, json_columns: tuple[str, ...] = ()
) -> Task:
    """Validate one record into a Task; the error names ``where``, the id and the field."""
    record = dict(record)
    for column in json_columns:
        value = record.get(column)
        if isinstance(value, str):
            try:
                record[column] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise FrozenSuiteError(f"{where}: field {column}: invalid JSON ({exc})") from exc
    try:
        return Task.model_validate(record)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(record)"
        ident = record.get("instance_id", "?")
        raise FrozenSuiteError(f"{where} ({ident}): field {field}: {err['msg']}") from None
