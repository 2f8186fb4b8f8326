"""Marks of gradings in progress: jobs that meet a new key at once run its tests once, and a mark
never decides a report (a lost or broken one costs one more run, nothing else)."""

from __future__ import annotations

import json
import multiprocessing
import os
import time

import pytest
from taskfactory import make_calc_task
from test_memo import TIMEOUT, report
from test_report_store import IDENTITY, LIMITS

from editcredit.sandbox import in_flight
from editcredit.sandbox.memo import GradingMemo
from editcredit.sandbox.report_store import ReportStore


class SlowBox:
    """A sandbox whose grading takes a while and is logged to a file shared by processes."""

    def __init__(self, log, planned=None, seconds=0.4):
        self.log, self.planned, self.seconds = log, planned, seconds

    def limits_for(self, task):
        return LIMITS

    def grade(self, task, patch, select=None):
        with open(self.log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        time.sleep(self.seconds)
        return self.planned or report(tag=f"graded by {os.getpid()}")

    def close(self):
        pass


def _grade_in_child(root, log, planned, start, out):
    start.wait()
    memo = GradingMemo(SlowBox(log, planned), store=ReportStore(root, IDENTITY))
    out.put((memo.grade(make_calc_task(), "p").model_dump_json(), memo.counts()))


def _two_jobs_at_once(tmp_path, planned=None):
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    log = tmp_path / "runs.log"
    jobs = [
        ctx.Process(target=_grade_in_child, args=(tmp_path / "store", log, planned, start, out))
        for _ in range(2)
    ]
    for job in jobs:
        job.start()
    start.set()
    answers = [out.get(timeout=30) for _ in jobs]
    for job in jobs:
        job.join(timeout=30)
    runs = log.read_text().split()
    return answers, runs


def test_two_jobs_that_meet_a_new_key_at_once_run_its_tests_once(tmp_path):
    [(first, first_counts), (second, second_counts)], runs = _two_jobs_at_once(tmp_path)
    assert len(runs) == 1
    assert first == second  # the waiter reads the holder's report
    counts = sorted([tuple(first_counts.values()), tuple(second_counts.values())])
    assert counts == [(0, 1, 0), (1, 0, 0)]  # one ran, one read it from the store
    assert not list((tmp_path / "store").rglob("*.running"))


def test_a_run_the_store_does_not_keep_is_run_again_by_the_waiter(tmp_path):
    """The holder's run stopped on a time limit: nothing is stored, so the waiter grades
    afresh after the holder's mark goes (as it would have without marks)."""
    answers, runs = _two_jobs_at_once(tmp_path, planned=report("finished", timeouts=[TIMEOUT]))
    assert len(runs) == 2 and len(set(runs)) == 2
    assert [counts for _, counts in answers] == [
        {"run": 1, "read_from_store": 0, "answered_in_memory": 0}
    ] * 2
    assert not list((tmp_path / "store").rglob("*.running"))


def _gone_pid() -> int:
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=lambda: None)
    child.start()
    child.join()
    return child.pid


@pytest.mark.parametrize(
    "holder, waits",
    [
        ("dead process of this node", False),  # taken over at once
        ("live process of this node", True),
        ("process of another node", True),  # cannot be seen to be gone: waited on, bounded
    ],
)
def test_a_mark_is_waited_on_while_its_holder_may_be_grading(tmp_path, holder, waits):
    me = in_flight.this_process()
    held = {
        "dead process of this node": {**me, "pid": _gone_pid()},
        "live process of this node": {
            **me,
            "pid": os.getppid(),
            "started": in_flight._started(os.getppid()),
        },
        "process of another node": {**me, "node": "elsewhere/boot"},
    }[holder]
    mark = tmp_path / "k.running"
    mark.write_text(json.dumps(held, sort_keys=True))
    now = [0.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    with in_flight.first_or_wait(
        mark, lambda: None, wait_s=5.0, clock=lambda: now[0], sleep=sleep
    ) as found:
        assert found is None  # this process grades
        ours = json.loads(mark.read_text())
    if waits:
        assert 5.0 <= sum(slept) < 5.0 + in_flight.POLL_S[1]
        assert ours == held  # graded unmarked: the other's mark stays
        assert json.loads(mark.read_text()) == held
    else:
        assert slept == [] and ours == me
        assert not mark.exists()  # its own mark removed at the end


def test_a_waiter_reads_the_entry_the_holder_leaves(tmp_path):
    mark = tmp_path / "k.running"
    mark.write_text(json.dumps({**in_flight.this_process(), "node": "elsewhere/boot"}))
    looks = []

    def stored():
        looks.append(1)
        return "the holder's report" if len(looks) == 3 else None

    with in_flight.first_or_wait(mark, stored, sleep=lambda s: None) as found:
        assert found == "the holder's report"
    assert len(looks) == 3


def test_an_entry_stored_just_before_the_mark_is_read_not_graded_again(tmp_path):
    mark = tmp_path / "k.running"
    looks = []

    def stored():  # absent at the first look, there once the mark is made
        looks.append(mark.exists())
        return "entry" if mark.exists() else None

    with in_flight.first_or_wait(mark, stored) as found:
        assert found == "entry"
    assert looks == [False, True] and not mark.exists()


def test_a_failed_grading_leaves_no_mark(tmp_path):
    mark = tmp_path / "k.running"
    with pytest.raises(RuntimeError), in_flight.first_or_wait(mark, lambda: None):
        assert mark.exists()
        raise RuntimeError("sandbox gone")
    assert not mark.exists()


def test_a_mark_nobody_touched_for_a_while_has_lost_its_holder(tmp_path):
    """A job killed on another node of a shared store leaves its mark: once untouched for
    STALE_S it is taken over at once."""
    mark = tmp_path / "k.running"
    mark.write_text(json.dumps({**in_flight.this_process(), "node": "elsewhere/boot"}))
    old = time.time() - in_flight.STALE_S - 1
    os.utime(mark, (old, old))
    slept = []
    with in_flight.first_or_wait(mark, lambda: None, sleep=slept.append) as found:
        assert found is None
        assert json.loads(mark.read_text()) == in_flight.this_process()
    assert slept == [] and not mark.exists()


def test_a_holder_touches_its_marks_while_it_grades(tmp_path, monkeypatch):
    monkeypatch.setattr(in_flight, "HEARTBEAT_S", 0.05)
    monkeypatch.setattr(in_flight, "_heartbeat", [])  # a thread that beats at this pace
    mark = tmp_path / "k.running"
    with in_flight.first_or_wait(mark, lambda: None):
        old = time.time() - 60
        os.utime(mark, (old, old))
        deadline = time.monotonic() + 10
        while time.time() - mark.stat().st_mtime > 30 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert time.time() - mark.stat().st_mtime < 30  # touched again
    assert not mark.exists()


def test_an_unreadable_entry_met_after_the_mark_leaves_no_mark(tmp_path):
    mark = tmp_path / "k.running"

    def stored():  # absent at the first look, unreadable once the mark is made
        if mark.exists():
            raise ValueError("entry changed by hand")
        return None

    with pytest.raises(ValueError), in_flight.first_or_wait(mark, stored):
        pass
    assert not mark.exists()
