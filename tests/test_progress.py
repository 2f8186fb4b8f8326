"""A job's progress line: the estimate, the format, the reporter's lines on its stream."""

from __future__ import annotations

import io
import time

import pytest

from editcredit.progress import (
    Progress,
    format_seconds,
    interval_from_env,
    progress_line,
    seconds_left,
)


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0, "0 s"),
        (0.4, "0 s"),
        (41, "41 s"),
        (59.6, "1 min 00 s"),
        (95, "1 min 35 s"),
        (3599, "59 min 59 s"),
        (3600, "1 h 00 min"),
        (7322, "2 h 02 min"),
    ],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_format_seconds_refuses_what_is_no_duration(bad):
    with pytest.raises(ValueError, match="not a duration"):
        format_seconds(bad)


@pytest.mark.parametrize(
    "done, total, elapsed, at_start, left",
    [
        (120, 392, 41.0, 0, 272 * 41.0 / 120),  # this run's rate
        (0, 392, 41.0, 0, None),  # nothing made yet: no rate
        (100, 392, 41.0, 100, None),  # resumed items are not this run's
        (150, 392, 30.0, 100, 242 * 30.0 / 50),  # only the 50 made by this run
        (392, 392, 300.0, 0, 0.0),  # all done
        (5, 4, 10.0, 0, 0.0),  # more than planned (a regrade counted) is done
        (3, 10, 0.0, 0, None),  # no time has passed
    ],
)
def test_seconds_left(done, total, elapsed, at_start, left):
    got = seconds_left(done, total, elapsed, at_start)
    assert got == (pytest.approx(left) if left is not None else None)


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ("eval base/holdout", 120, 392, "slots", 41.0, 92.9, "batch 2/4"),
            "progress eval base/holdout: 120/392 slots (30 %), 41 s elapsed, ~1 min 33 s left; "
            "batch 2/4",
        ),
        (
            ("train M-s42 steps 1..4", 0, 4, "steps", 12.0, None, ""),
            "progress train M-s42 steps 1..4: 0/4 steps (0 %), 12 s elapsed, "
            "no estimate before the first is done",
        ),
        (
            ("stop M-s42 trees", 30, 30, "trees", 75.0, 0.0, ""),
            "progress stop M-s42 trees: 30/30 trees (100 %), 1 min 15 s elapsed, done",
        ),
        (("empty", 0, 0, "slots", 1.0, 0.0, ""), "progress empty: 0/0 slots, 1 s elapsed, done"),
    ],
)
def test_progress_line(args, line):
    assert progress_line(*args) == line


@pytest.mark.parametrize(
    "raw, every",
    [(None, 10.0), ("", 10.0), ("2.5", 2.5), ("0", 0.0)],
)
def test_interval_from_env(monkeypatch, raw, every):
    if raw is None:
        monkeypatch.delenv("EDITCREDIT_PROGRESS_SECONDS", raising=False)
    else:
        monkeypatch.setenv("EDITCREDIT_PROGRESS_SECONDS", raw)
    assert interval_from_env() == every


@pytest.mark.parametrize("raw", ["soon", "-1", "nan"])
def test_interval_from_env_names_a_bad_value(monkeypatch, raw):
    monkeypatch.setenv("EDITCREDIT_PROGRESS_SECONDS", raw)
    with pytest.raises(ValueError, match=f"EDITCREDIT_PROGRESS_SECONDS={raw!r}"):
        interval_from_env()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_reporter_counts_from_its_own_start():
    clock, out = Clock(), io.StringIO()
    p = Progress("eval m/s", 10, "slots", every=5, done=4, stream=out, clock=clock)
    clock.now += 20
    p.update(advance=2, detail="round 1")
    p.report()
    clock.now += 10
    p.update(done=10)
    p.report()
    assert out.getvalue().splitlines() == [
        "progress eval m/s: 6/10 slots (60 %), 20 s elapsed, ~40 s left; round 1",
        "progress eval m/s: 10/10 slots (100 %), 30 s elapsed, done; round 1",
    ]


def test_a_count_is_read_at_each_line():
    clock, out, items = Clock(), io.StringIO(), [1]
    p = Progress("x", 4, "trees", every=1, count=lambda: len(items), stream=out, clock=clock)
    items += [2, 3]
    clock.now += 6
    assert p.line() == "progress x: 3/4 trees (75 %), 6 s elapsed, ~3 s left"


def test_the_thread_writes_while_the_job_runs_and_once_at_the_end():
    out = io.StringIO()
    with Progress("job", 3, "steps", every=0.05, stream=out) as p:
        time.sleep(0.3)
        p.update(advance=3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all(line.startswith("progress job: ") for line in lines)
    assert lines[0].startswith("progress job: 0/3 steps")
    assert lines[-1].startswith("progress job: 3/3 steps (100 %)") and lines[-1].endswith("done")


def test_every_zero_writes_nothing_and_starts_no_thread():
    out = io.StringIO()
    with Progress("job", 3, "steps", every=0, stream=out) as p:
        p.update(advance=1)
        p.report()
        assert p._thread is None
    assert out.getvalue() == ""


def test_a_failing_job_gets_no_closing_line():
    out = io.StringIO()
    with pytest.raises(RuntimeError), Progress("job", 3, "steps", every=60, stream=out):
        raise RuntimeError("boom")
    assert out.getvalue() == ""
