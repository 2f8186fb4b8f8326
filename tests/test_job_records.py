"""Attempts leave records that a rerun cannot erase: each attempt keeps its own log under its
identity beside the declared log (which Snakemake removes before a run), and a failing attempt
writes its failure record there before it fails."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from editcredit.job_records import (
    attempt_id,
    attempt_line,
    attempt_log_path,
    failure_path,
    failure_record,
    fresh_attempt,
    write_failure_record,
)
from editcredit.workflow import logged

NOON = 1_796_126_400.0  # 2026-12-01T12:00:00Z


@pytest.mark.parametrize(
    ("host", "pid", "expected"),
    [
        ("node7", 42, "20261201T120000Z-node7-42"),
        ("node7.cluster.example.org", 42, "20261201T120000Z-node7-42"),  # the short name
        ("we ird/host", 9, "20261201T120000Z-we_ird_host-9"),  # a file-name-safe name
        ("", 1, "20261201T120000Z-host-1"),
    ],
)
def test_attempt_id(host, pid, expected):
    assert attempt_id(NOON, host, pid) == expected


def test_attempt_ids_differ_by_process_and_time():
    ids = {attempt_id(NOON, "h", 1), attempt_id(NOON, "h", 2), attempt_id(NOON + 1, "h", 1)}
    assert len(ids) == 3


@pytest.mark.parametrize(
    ("log", "attempt", "own_log", "failed"),
    [
        (
            "logs/audit_params/M-s1/step_2.log",
            "A",
            "logs/audit_params/M-s1/step_2.attempts/A.log",
            "logs/audit_params/M-s1/step_2.attempts/A.failed.json",
        ),
        ("logs/audit_summary.log", "B", "logs/audit_summary.attempts/B.log", None),
        ("logs/x/no_suffix", "C", "logs/x/no_suffix.attempts/C.log", None),
    ],
)
def test_an_attempts_files_are_beside_the_declared_log(log, attempt, own_log, failed):
    assert attempt_log_path(log, attempt).as_posix() == own_log
    failed = failed or own_log.removesuffix(".log") + ".failed.json"
    assert failure_path(log, attempt).as_posix() == failed


def test_a_fresh_attempt_never_reuses_a_taken_name(tmp_path):
    log = tmp_path / "r.log"
    first = fresh_attempt(log, NOON)
    attempt_log_path(log, first).parent.mkdir()
    attempt_log_path(log, first).write_text("")
    second = fresh_attempt(log, NOON)
    failure_path(log, second).write_text("{}")
    assert (first, second, fresh_attempt(log, NOON)) == (first, f"{first}.2", f"{first}.3")


def test_attempt_line():
    assert attempt_line("A", "ok") == "=== editcredit attempt A ok\n"
    assert attempt_line("A", "failed", "E") == "=== editcredit attempt A failed: E\n"


class _WithRecord(RuntimeError):
    def __init__(self, message, record):
        super().__init__(message)
        self.record = record


def test_failure_record_keeps_the_errors_record_and_traceback():
    try:
        raise _WithRecord("audit failed: equals base", {"ok": False, "failures": ["equals base"]})
    except _WithRecord as exc:
        body = failure_record(exc, "A", "logs/x.log", "2026-12-01T12:00:00Z")
    assert body["record"] == {"ok": False, "failures": ["equals base"]}
    assert body["error_type"] == "_WithRecord" and body["error"] == "audit failed: equals base"
    assert "raise _WithRecord" in body["traceback"]
    assert body["attempt"] == "A" and body["log"] == "logs/x.log"
    assert body["attempt_log"] == "logs/x.attempts/A.log"


def test_a_second_failure_record_of_one_attempt_never_overwrites_the_first(tmp_path):
    log = tmp_path / "x.log"
    attempt_log_path(log, "A").parent.mkdir()
    first = write_failure_record(ValueError("one"), "A", log, "t")
    second = write_failure_record(ValueError("two"), "A", log, "t")
    assert first != second
    assert json.loads(first.read_text())["error"] == "one"
    assert json.loads(second.read_text())["error"] == "two"


def _failing_job(log, message):
    with logged(log) as attempt:
        print(f"working in {attempt}")
        logging.getLogger("job").info("a log line")
        raise _WithRecord(message, {"step": 4, "ok": False})


def test_a_rerun_keeps_the_failed_attempts_log_and_record(tmp_path):
    log = tmp_path / "logs/audit_params/O-s1/step_4.log"
    stdout = sys.stdout
    with pytest.raises(_WithRecord):
        _failing_job(log, "first failure")
    assert sys.stdout is stdout  # restored
    [record] = log.with_name("step_4.attempts").glob("*.failed.json")
    first_record = record.read_bytes()
    body = json.loads(first_record)
    attempt = body["attempt"]
    assert body["error"] == "first failure" and body["record"] == {"step": 4, "ok": False}
    own = attempt_log_path(log, attempt)
    first_log = own.read_text()
    assert log.read_text() == first_log  # the declared log holds the same lines
    assert f"working in {attempt}" in first_log and "a log line" in first_log
    assert "Traceback" in first_log
    assert first_log.endswith(attempt_line(attempt, "failed", f"_WithRecord; record {record}"))

    log.unlink()  # what Snakemake does before it runs the rule again
    with logged(log) as second:  # the rerun succeeds
        print("second attempt works")
    assert second != attempt
    assert own.read_text() == first_log and record.read_bytes() == first_record
    assert log.read_text() == attempt_log_path(log, second).read_text()
    assert "second attempt works" in log.read_text() and "first" not in log.read_text()
    assert log.read_text().endswith(attempt_line(second, "ok"))


def test_the_declared_log_is_appended_to_never_truncated(tmp_path):
    log = tmp_path / "r.log"
    log.write_text("earlier lines\n")
    with logged(log):
        print("new lines")
    assert log.read_text().startswith("earlier lines\n") and "new lines" in log.read_text()


def test_two_failed_attempts_leave_two_records_and_two_logs(tmp_path):
    log = tmp_path / "logs/r.log"
    for message in ("one", "two"):
        with pytest.raises(_WithRecord):
            _failing_job(log, message)
    kept = log.with_name("r.attempts")
    records = [json.loads(p.read_text()) for p in kept.glob("*.failed.json")]
    assert sorted(r["error"] for r in records) == ["one", "two"]
    assert len({r["attempt"] for r in records}) == 2
    assert len(list(kept.glob("*.log"))) == 2


def test_the_jobs_stdout_behaves_like_a_file(tmp_path):
    log = tmp_path / "r.log"
    with logged(log) as attempt:
        assert sys.stdout.fileno() > 2 and sys.stdout.encoding.lower() in ("utf-8", "utf8")
        assert not sys.stdout.isatty() and sys.stdout.writable()  # the file's own method
        sys.stdout.writelines(["a\n", "b\n"])
    assert "a\nb\n" in log.read_text()
    assert "a\nb\n" in attempt_log_path(log, attempt).read_text()
