"""Freezing: deterministic bytes, pinned manifest hash, row validation on reading."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from taskfactory import CONFIG, make_calc_task

from editcredit.data.freeze import FrozenSuiteError, freeze, load_tasks
from editcredit.data.task import Task
from editcredit.suites.build import build_suite


def test_roundtrip_and_identical_bytes(tmp_path):
    tasks = [make_calc_task()]
    d1 = freeze(tasks, tmp_path / "a", "toy", {"seed": 1}, None)
    d2 = freeze(tasks, tmp_path / "b", "toy", {"seed": 1}, None)
    assert d1 == d2
    for name in ("tasks.parquet", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert load_tasks(tmp_path / "a" / "tasks.parquet") == tasks
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["tasks"] == {"toy__calc__add": tasks[0].sha256()}
    assert hashlib.sha256((tmp_path / "a" / "manifest.json").read_bytes()).hexdigest() == d1


def test_pinned_hash_mismatch_names_both_and_leaves_nothing(tmp_path):
    pinned = "0" * 64
    with pytest.raises(FrozenSuiteError) as err:
        freeze([make_calc_task()], tmp_path, "toy", {}, pinned)
    assert pinned in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_changed_byte_in_frozen_file_is_caught(tmp_path):
    freeze([make_calc_task()], tmp_path, "toy", {}, None)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["tasks_parquet_sha256"] = "f" * 64
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FrozenSuiteError, match="differs from"):
        load_tasks(tmp_path / "tasks.parquet")


def test_bad_row_is_named(tmp_path):
    freeze([make_calc_task()], tmp_path, "toy", {}, None)
    table = pq.read_table(tmp_path / "tasks.parquet")
    rows = table.to_pylist()
    rows[0]["FAIL_TO_PASS"] = ["no_double_colon"]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), tmp_path / "bad.parquet")
    with pytest.raises(
        FrozenSuiteError,
        match=r"bad.parquet: row 0 \(toy__calc__add\): field "
        r"FAIL_TO_PASS",
    ):
        load_tasks(tmp_path / "bad.parquet", verify_manifest=False)


def test_generation_is_byte_identical_across_runs(tmp_path, docker_ready):
    cfg = {
        **CONFIG["suites"]["minibugs"],
        "modules": ["bitwise_kit"],
        "mutants_per_function": 1,
        "manifest_sha256": "",
    }
    digests = [build_suite("minibugs", cfg, CONFIG["sandbox"], tmp_path / str(i)) for i in range(2)]
    assert digests[0] == digests[1]
    assert (tmp_path / "0" / "tasks.parquet").read_bytes() == (
        tmp_path / "1" / "tasks.parquet"
    ).read_bytes()
    tasks = load_tasks(tmp_path / "0" / "tasks.parquet")
    assert len(tasks) >= 5
    for task in tasks:
        assert task.FAIL_TO_PASS and task.PASS_TO_PASS
        assert task.split in ("train", "dev", "holdout")
        assert "expected:" in task.problem_statement or "failure:" in task.problem_statement
        # the statement's test is the one visible FAIL_TO_PASS test, named in the statement
        assert task.statement_test in task.FAIL_TO_PASS
        assert f"Failing test: `{task.statement_test}`" in task.problem_statement
        assert task.visible_tests() == [task.statement_test, *task.PASS_TO_PASS]
        # never the fix: the gold patch's added lines are not in the statement
        added = [
            ln[1:].strip()
            for ln in task.patch.splitlines()
            if ln.startswith("+") and not ln.startswith("+++")
        ]
        assert not any(a and a in task.problem_statement for a in added if len(a) > 8)


def test_pinned_manifest_is_checked_when_reading(tmp_path):
    digest = freeze([make_calc_task()], tmp_path, "toy", {}, None)
    assert load_tasks(tmp_path / "tasks.parquet", pinned_manifest_sha256=digest)
    with pytest.raises(FrozenSuiteError, match="differs from the pinned " + "1" * 64):
        load_tasks(tmp_path / "tasks.parquet", pinned_manifest_sha256="1" * 64)


@pytest.mark.parametrize(
    ("statement_test", "error"),
    [
        ("test_calc.py::test_add", None),
        ("", None),
        ("test_calc.py::test_mul", "is not in FAIL_TO_PASS"),
        ("test_calc.py::test_nowhere", "is not in FAIL_TO_PASS"),
    ],
)
def test_statement_test_must_be_a_fail_to_pass_id(statement_test, error):
    record = {**make_calc_task().model_dump(), "statement_test": statement_test}
    if error is None:
        task = Task.model_validate(record)
        assert task.hidden_tests() == [i for i in task.FAIL_TO_PASS if i != statement_test]
    else:
        with pytest.raises(ValueError, match=error):
            Task.model_validate(record)


def test_statement_test_is_stored_and_part_of_the_identity(tmp_path):
    task = make_calc_task()
    other = task.model_copy(update={"statement_test": ""})
    assert task.sha256() != other.sha256()
    freeze([task], tmp_path, "toy", {}, None)
    assert load_tasks(tmp_path / "tasks.parquet")[0].statement_test == "test_calc.py::test_add"


def test_runner_fields_freeze_and_an_unknown_runner_is_refused(tmp_path):
    plain = make_calc_task()
    assert "test_runner" not in plain.canonical_json()  # the default keeps old identities
    ids = {
        "FAIL_TO_PASS": ["test_add (tests.test_calc.T)"],
        "PASS_TO_PASS": [],
        "statement_test": "",
    }
    task = plain.model_copy(update={"test_runner": "django", **ids})
    task = Task.model_validate({**task.model_dump(), "test_command": ["./tests/runtests.py"]})
    assert task.sha256() != plain.sha256()
    freeze([task], tmp_path / "r", "toy", {}, None)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["schema_version"] == 3
    (back,) = load_tasks(tmp_path / "r" / "tasks.parquet")
    assert (back.test_runner, back.test_command) == ("django", ["./tests/runtests.py"])
    freeze([plain], tmp_path / "p", "toy", {}, None)
    names = pq.read_table(tmp_path / "p" / "tasks.parquet").schema.names
    assert "test_runner" not in names  # a pytest-only suite's bytes do not change
    rows = pq.read_table(tmp_path / "r" / "tasks.parquet").to_pylist()
    rows[0]["test_runner"] = "nose"
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bad.parquet")
    with pytest.raises(FrozenSuiteError, match=r"row 0 \(toy__calc__add\): field test_runner"):
        load_tasks(tmp_path / "bad.parquet", verify_manifest=False)
    with pytest.raises(FrozenSuiteError, match="unknown test runner 'nose'"):
        freeze([task.model_copy(update={"test_runner": "nose"})], tmp_path / "n", "toy", {}, None)
