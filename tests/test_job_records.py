"""Attempts leave records that a rerun cannot erase: the log is appended to under each attempt's
identity, and a failing attempt writes its failure record beside the log before it fails."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from editcredit.job_records import (
    attempt_id,
    attempt_line,
    failure_path,
    failure_record,
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
    ("log", "attempt", "expected"),
    [
        ("logs/audit_params/M-s1/step_2.log", "A", "logs/audit_params/M-s1/step_2.failed-A.json"),
        ("logs/audit_summary.log", "B", "logs/audit_summary.failed-B.json"),
        ("logs/x/no_suffix", "C", "logs/x/no_suffix.failed-C.json"),
    ],
)
def test_failure_path_is_beside_the_log(log, attempt, expected):
    assert failure_path(log, attempt).as_posix() == expected


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


def test_a_second_failure_record_of_one_attempt_never_overwrites_the_first(tmp_path):
    log = tmp_path / "x.log"
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
    first_log = log.read_text()
    [record] = sorted(log.parent.glob("step_4.failed-*.json"))
    first_record = record.read_bytes()
    body = json.loads(first_record)
    assert body["error"] == "first failure" and body["record"] == {"step": 4, "ok": False}
    assert f"working in {body['attempt']}" in first_log and "a log line" in first_log
    assert f"attempt {body['attempt']} failed: _WithRecord; record {record}" in first_log

    with logged(log) as second:  # the rerun succeeds
        print("second attempt works")
    text = log.read_text()
    assert text.startswith(first_log)  # appended, never truncated
    assert "second attempt works" in text[len(first_log) :]
    assert text.count("=== editcredit attempt") == 4  # started, failed, started, ok
    assert text.endswith(attempt_line(second, "ok"))
    assert record.read_bytes() == first_record
    assert sys.stdout is stdout  # restored


def test_two_failed_attempts_leave_two_records(tmp_path):
    log = tmp_path / "logs/r.log"
    for message in ("one", "two"):
        with pytest.raises(_WithRecord):
            _failing_job(log, message)
    records = log.parent.glob("r.failed-*.json")  # one process, one second: a counter apart
    assert sorted(json.loads(p.read_text())["error"] for p in records) == ["one", "two"]
    assert log.read_text().count("Traceback") == 2
