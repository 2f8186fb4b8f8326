"""The SWE-bench-format importer validates every row and names the bad row and field."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.data.freeze import FrozenSuiteError
from editcredit.suites.swebench_import import import_tasks

#: A task's grading limit (``suites.<name>.timeout_s``, the schema's default; the importer fills
#: it into every row that names none)
TIMEOUT_S = 20.0

TEST_PATCH = (
    "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n"
    "+++ b/tests/test_x.py\n@@ -1 +1,2 @@\n def test_a(): pass\n+def test_b(): pass\n"
)


def row(**over):
    base = {
        "instance_id": "org__repo-1",
        "repo": "org/repo",
        "base_commit": "abc123",
        "problem_statement": "It breaks.",
        "patch": "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": json.dumps(["tests/test_x.py::test_b"]),
        "PASS_TO_PASS": json.dumps(["tests/test_x.py::test_a"]),
        "version": "1.0",
    }
    return {**base, **over}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_rows_become_tasks(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(), row(instance_id="org__repo-2")])
    tasks = import_tasks(
        path, "swe", image_template="sweb.eval.x86_64.{instance_id}", timeout_s=TIMEOUT_S
    )
    assert [t.image for t in tasks] == [
        "sweb.eval.x86_64.org__repo-1",
        "sweb.eval.x86_64.org__repo-2",
    ]
    assert tasks[0].FAIL_TO_PASS == ["tests/test_x.py::test_b"]
    assert tasks[0].test_paths == ["tests/test_x.py"]
    assert tasks[0].meta["version"] == "1.0"


def test_parquet_rows_become_tasks(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([row(image="img:1")]), path)
    assert import_tasks(path, "swe", image_template="", timeout_s=TIMEOUT_S)[0].image == "img:1"


@pytest.mark.parametrize(
    "bad,field",
    [
        ({"FAIL_TO_PASS": '["no_colons"]'}, "FAIL_TO_PASS"),
        ({"FAIL_TO_PASS": "not json"}, "FAIL_TO_PASS"),
        ({"problem_statement": ""}, "problem_statement"),
        ({"patch": None}, "patch"),
        ({"test_patch": "no diff here"}, "test_patch"),
    ],
)
def test_bad_row_and_field_are_named(tmp_path, bad, field):
    path = write_jsonl(tmp_path / "d.jsonl", [row(), row(instance_id="org__repo-2", **bad)])
    with pytest.raises(FrozenSuiteError) as err:
        import_tasks(path, "swe", image_template="img:{instance_id}", timeout_s=TIMEOUT_S)
    assert "d.jsonl: row 1" in str(err.value)
    assert f"field {field}" in str(err.value)


def test_duplicate_ids_and_broken_lines(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(), row()])
    with pytest.raises(FrozenSuiteError, match="row 1: field instance_id: duplicate"):
        import_tasks(path, "swe", image_template="img", timeout_s=TIMEOUT_S)
    broken = tmp_path / "b.jsonl"
    broken.write_text(json.dumps(row()) + "\n{oops\n")
    with pytest.raises(FrozenSuiteError, match="b.jsonl: line 2: not JSON"):
        import_tasks(broken, "swe", image_template="img", timeout_s=TIMEOUT_S)


def test_runners_from_the_row_or_swebench_specs(tmp_path):
    django = row(
        instance_id="django__django-1",
        repo="django/django",
        FAIL_TO_PASS=json.dumps(["test_b (x.tests.T)"]),
        PASS_TO_PASS=json.dumps(["test_a (x.tests.T)"]),
    )
    sympy = row(
        instance_id="sympy__sympy-1",
        repo="sympy/sympy",
        FAIL_TO_PASS=json.dumps(["test_b"]),
        PASS_TO_PASS="[]",
    )
    own = row(instance_id="org__repo-2", test_runner="unittest", test_command='["python3"]')
    own["FAIL_TO_PASS"] = json.dumps(["test_b (tests.test_x.T)"])
    own["PASS_TO_PASS"] = "[]"
    path = write_jsonl(tmp_path / "r.jsonl", [django, sympy, own])
    tasks = import_tasks(path, "s", image_template="img:{instance_id}", timeout_s=TIMEOUT_S)
    got = [(t.test_runner, t.test_command[:1]) for t in tasks]
    assert got == [
        ("django", ["./tests/runtests.py"]),
        ("sympy", ["bin/test"]),
        ("unittest", ["python3"]),
    ]
    bad = row(test_runner="nose")
    with pytest.raises(FrozenSuiteError, match=r"row 0 \(org__repo-1\): field test_runner"):
        import_tasks(
            write_jsonl(tmp_path / "bad.jsonl", [bad]), "s", image_template="i", timeout_s=TIMEOUT_S
        )
    pytest_ids = row(FAIL_TO_PASS=json.dumps(["test_b (x.T)"]))
    with pytest.raises(FrozenSuiteError, match="field FAIL_TO_PASS"):
        import_tasks(
            write_jsonl(tmp_path / "ids.jsonl", [pytest_ids]),
            "s",
            image_template="i",
            timeout_s=TIMEOUT_S,
        )
