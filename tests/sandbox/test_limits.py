"""Per-test limits from gold-run times (METHOD §6), the run's budget, the recorded times."""

from __future__ import annotations

import json

import pytest
from taskfactory import CONFIG, count_gold_runs, make_calc_task, write_control_records

from editcredit.sandbox.limits import (
    GoldTimes,
    GoldTimesBook,
    gold_times_book,
    limit_settings,
    load_gold_times,
    run_budget_s,
)
from editcredit.sandbox.limits import (
    per_test_limits as limits_of,
)
from editcredit.sandbox.sentinels import make_sentinels

SETTINGS = limit_settings(
    {"factor": 10, "floor_s": 5, "collect_factor": 4, "collect_floor_s": 10, "max_timeouts": 2}
    | {"cpu_floor_s": 1}
)
NO_CPU = limit_settings(
    {"factor": 10, "floor_s": 5, "collect_factor": 4, "collect_floor_s": 10, "max_timeouts": 2}
    | {"cpu_floor_s": 0}
)


@pytest.mark.parametrize(
    "gold,settings,timeout_factor,tests,default_s,collect_s,cpu",
    [
        # fast tests: the floor; slow ones: factor x their own time; CPU: its own floor
        (
            GoldTimes(0.5, {"a": 0.01, "b": 2.0}),
            SETTINGS,
            1.0,
            {"a": 5.0, "b": 20.0},
            20.0,
            10.0,
            {"tests": {"a": 1.0, "b": 20.0}, "default_s": 20.0},
        ),
        # slow collection: collect_factor x the gold collection
        (
            GoldTimes(4.0, {"a": 0.01}),
            SETTINGS,
            1.0,
            {"a": 5.0},
            5.0,
            16.0,
            {"tests": {"a": 1.0}, "default_s": 1.0},
        ),
        # sandbox.timeout_factor scales every limit, floors included
        (
            GoldTimes(0.5, {"a": 0.01, "b": 2.0}),
            SETTINGS,
            2.0,
            {"a": 10.0, "b": 40.0},
            40.0,
            20.0,
            {"tests": {"a": 2.0, "b": 40.0}, "default_s": 40.0},
        ),
        # no gold times: every limit is its floor
        (None, SETTINGS, 1.0, {}, 5.0, 10.0, {"tests": {}, "default_s": 1.0}),
        # cpu_floor_s 0: no CPU-time limit, the request is the wall clock's alone
        (GoldTimes(0.5, {"a": 0.01}), NO_CPU, 1.0, {"a": 5.0}, 5.0, 10.0, None),
    ],
)
def test_limits_from_gold_times(gold, settings, timeout_factor, tests, default_s, collect_s, cpu):
    limits = limits_of(gold, settings, timeout_factor)
    expected = {
        "tests": tests,
        "default_s": default_s,
        "collect_s": collect_s,
        "max_timeouts": 2,
        "gold_timed": gold is not None,
    }
    if cpu is not None:
        expected["cpu"] = cpu
    assert limits == expected


def test_budget_covers_the_allowed_timeouts_and_their_reruns():
    limits = limits_of(GoldTimes(0.5, {"a": 2.0}), SETTINGS, 1.0)
    # a test still within its 20 s at the run's limit, 2 timeouts x 2 x (20 + 10) + 1 each,
    # plus a collection rerun of 10 + 1
    assert run_budget_s(30.0, limits) == 30.0 + 20.0 + 2 * 61.0 + 11.0
    assert run_budget_s(30.0, None) == 30.0


@pytest.mark.parametrize(
    "cfg,message",
    [
        ({"floor": 3}, r"unknown keys \['floor'\]"),
        ({"floor_s": 0}, "floor_s: 0 is less than or equal to the minimum of 0"),
        ({"max_timeouts": 0}, "max_timeouts: 0 is less than the minimum of 1"),
        ({"cpu_floor_s": -1}, "cpu_floor_s: -1 is less than the minimum of 0"),
    ],
)
def test_settings_errors_name_the_field(cfg, message):
    with pytest.raises(ValueError, match=message):
        limit_settings(cfg)


def test_gold_times_load_from_control_records(tmp_path):
    timings = {"collect_s": 0.2, "tests": {"t.py::a": 0.01}}
    record = {"instance_id": "x", "gold": {"sandbox": {"timings": timings}}}
    (tmp_path / "x.json").write_text(json.dumps(record))
    (tmp_path / "y.json").write_text(json.dumps({"instance_id": "y", "gold": {"sandbox": None}}))
    assert load_gold_times(tmp_path) == {"x": GoldTimes(0.2, {"t.py::a": 0.01})}
    (tmp_path / "z.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="z.json"):
        load_gold_times(tmp_path)


def test_book_keeps_the_first_measurement():
    book = GoldTimesBook()
    assert not book.known("x")
    book.put("x", None)
    book.put("x", GoldTimes(1.0))
    assert book.known("x") and book.get("x") is None


A_TIMES = {"collect_s": 0.2, "tests": {"t.py::a": 0.01}}
B_TIMES = {"collect_s": 0.5, "tests": {"t.py::b": 2.0, "t.py::c": 0.1}}


@pytest.mark.parametrize(
    "dirs,known",
    [
        # one directory: the tasks with times; "n" (its gold run did not finish) is absent
        (["one"], {"a": A_TIMES}),
        # two suites' directories: the tasks of both
        (["one", "two"], {"a": A_TIMES, "b": B_TIMES}),
        # the same records twice agree with themselves
        (["one", "one"], {"a": A_TIMES}),
        # none: an empty book (every task measured by the sandbox)
        (None, {}),
        ([], {}),
    ],
)
def test_a_book_from_the_control_rules_records(tmp_path, dirs, known):
    write_control_records(tmp_path / "one", {"a": A_TIMES, "n": None})
    write_control_records(tmp_path / "two", {"b": B_TIMES})
    book = gold_times_book(None if dirs is None else [tmp_path / d for d in dirs])
    assert book.timings() == known
    for instance_id, timings in known.items():
        assert book.get(instance_id) == GoldTimes.from_timings(timings)
    assert not book.known("n") and not book.known("missing")


def test_one_directory_may_be_given_as_a_path(tmp_path):
    records = write_control_records(tmp_path / "tasks", {"a": A_TIMES})
    assert gold_times_book(records).timings() == gold_times_book([records]).timings()


@pytest.mark.parametrize(
    "dirs,message",
    [
        (["nope"], r"nope: no control rule's per-task directory"),
        (["one", "nope"], r"nope: no control rule's per-task directory"),
        (["one", "other"], r"other: a has other gold times in another directory"),
    ],
)
def test_a_book_of_missing_or_disagreeing_directories_is_refused_naming_them(
    tmp_path, dirs, message
):
    write_control_records(tmp_path / "one", {"a": A_TIMES})
    write_control_records(tmp_path / "other", {"a": B_TIMES})
    with pytest.raises(ValueError, match=message):
        gold_times_book([tmp_path / d for d in dirs])


def test_the_plain_timings_round_trip_for_the_asked_tasks():
    book = GoldTimesBook(
        {"a": GoldTimes.from_timings(A_TIMES), "b": GoldTimes.from_timings(B_TIMES)}
    )
    book.put("n", None)  # measured without times: never handed on
    assert book.timings(["b", "n", "x"]) == {"b": B_TIMES}
    again = GoldTimesBook.from_timings(json.loads(json.dumps(book.timings())))
    assert again.timings() == book.timings() == {"a": A_TIMES, "b": B_TIMES}
    assert GoldTimesBook.from_timings(None).timings() == {}


@pytest.mark.parametrize("recorded", [True, False])
def test_a_pool_with_recorded_times_makes_no_gold_run(tmp_path, monkeypatch, recorded):
    """The local backend grades for real: a task with recorded times is held to their limits
    without a gold run of its own; a task without them is run against the floors alone, and
    since no test reaches a floor, no gold run is made either (each run is the one its gold
    times' limits would have given: every such limit is at least its floor)."""
    from editcredit.sandbox.pool import SandboxPool

    task = make_calc_task()
    timings = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 2.0}}
    records = write_control_records(tmp_path, {task.instance_id: timings} if recorded else {})
    measured = count_gold_runs(monkeypatch)
    book = gold_times_book(records)
    with SandboxPool("local", CONFIG["sandbox"], 2, book) as pool:
        assert pool.gold_times is book and all(box.gold_times is book for box in pool._all)
        reports = [pool.grade(task, patch) for patch in (task.patch, "", task.patch, "")]
    assert measured == []
    limits = [r.limits for r in reports]
    assert all(lim["gold_timed"] is recorded for lim in limits)
    floors = limits_of(None, limit_settings(CONFIG["sandbox"].get("test_limits")), 1.0)
    if recorded:  # factor 10 x the recorded 2.0 s
        assert all(lim["tests"] == {"test_calc.py::test_add": 20.0} for lim in limits)
    else:
        assert all(lim == floors for lim in limits)
    assert [r.observations.finished for r in reports] == [True] * 4
    assert [r.timeouts for r in reports] == [[]] * 4


def test_a_test_past_its_floor_takes_a_gold_run_and_its_own_limit(monkeypatch):
    """A task without gold times whose gold test is slower than the floor: the run against
    the floors times that test out, so the task is timed with one gold run and graded again
    under the limits its times give (factor 10 x its seconds), where it passes. Without the
    gold run it would be a reproduced timeout, a valid 0 (``measure_gold: false``)."""
    from taskfactory import CALC_BUG, CALC_FIXED, WEIGHTS

    from editcredit.grading.grader import grade_patch
    from editcredit.sandbox.local_backend import LocalSandbox
    from editcredit.sandbox.patches import diff_trees

    sleep = '    """Sum."""\n    import time\n\n    time.sleep(0.6)\n'
    slow = CALC_FIXED.replace('    """Sum."""\n', sleep)
    patch = diff_trees({"calc.py": CALC_BUG}, {"calc.py": slow})
    task = make_calc_task(timeout_s=60.0).model_copy(update={"patch": patch})  # the gold fix
    measured = count_gold_runs(monkeypatch)
    verdicts = {}
    for measure in (True, False):
        settings = limit_settings({"floor_s": 0.4, "cpu_floor_s": 0.25, "measure_gold": measure})
        with LocalSandbox(timeout_factor=1.0, limits=settings, mode="warm") as box:
            report = grade_patch(task, patch, box, *WEIGHTS)
        verdicts[measure] = report
    assert measured == [task.instance_id]
    timed = verdicts[True]
    assert timed.verdict == "valid_1", timed.reason
    assert timed.sandbox.limits["gold_timed"] and not timed.sandbox.timeouts
    assert timed.sandbox.limits["tests"]["test_calc.py::test_add"] >= 10 * 0.6
    assert verdicts[False].verdict == "valid_0"
    assert verdicts[False].tests["test_calc.py::test_add"]["status"] == "timeout"


def test_sentinels_are_per_nonce_beside_the_first_test_file():
    one, two = make_sentinels("n1", ["tests/test_a.py"]), make_sentinels("n2", ["tests/test_a.py"])
    assert one.path.startswith("tests/test_") and one.path != two.path
    assert {one.must_pass, one.must_fail}.isdisjoint({two.must_pass, two.must_fail})
    assert sorted(one.roles.values()) == ["must_fail", "must_pass"]
    namespace: dict = {}
    exec(one.source, namespace)
    namespace[one.must_pass]()
    with pytest.raises(AssertionError):
        namespace[one.must_fail]()


def _calc_with_add(body: str):
    """The toy calc task with ``add`` replaced by ``body`` (a loop, a sleep), as a patch."""
    from taskfactory import CALC_BUG, make_calc_task

    from editcredit.sandbox.patches import diff_trees

    looped = CALC_BUG.replace('    """Sum."""\n', '    """Sum."""\n' + body)
    return make_calc_task(timeout_s=60.0), diff_trees({"calc.py": CALC_BUG}, {"calc.py": looped})


@pytest.mark.parametrize(
    "body,cpu_floor_s,limited_by,most_wall_s",
    [
        # a loop burns CPU: told after cpu_floor_s of CPU, long before the 4 s wall limit
        ("    while True:\n        pass\n", 0.3, "cpu", 2.0),
        # a test that waits burns none: the wall-clock limit tells it
        ("    import time\n    time.sleep(60)\n", 0.3, "wall", 6.0),
        # no CPU-time limit: a loop waits out the wall clock, as before
        ("    while True:\n        pass\n", 0.0, "wall", 6.0),
    ],
)
def test_a_loop_is_told_by_its_cpu_seconds_a_wait_by_the_wall_clock(
    body, cpu_floor_s, limited_by, most_wall_s
):
    """A real graded run (local backend): the test past a limit is killed, rerun alone,
    killed again, a FAILED call with reason timeout; which limit it passed is recorded."""
    from taskfactory import WEIGHTS

    from editcredit.grading.grader import grade_patch
    from editcredit.sandbox.local_backend import LocalSandbox

    task, patch = _calc_with_add(body)
    settings = limit_settings({"floor_s": 4.0, "cpu_floor_s": cpu_floor_s, "measure_gold": False})
    with LocalSandbox(timeout_factor=1.0, limits=settings, mode="warm") as box:
        report = grade_patch(task, patch, box, *WEIGHTS)
    assert report.verdict == "valid_0", report.reason
    assert report.tests["test_calc.py::test_add"]["status"] == "timeout"
    assert report.tests["test_calc.py::test_mul"]["status"] == "passed"
    (timeout,) = report.sandbox.timeouts
    assert timeout.reproduced and timeout.limited_by == limited_by
    assert timeout.seconds <= most_wall_s
    if limited_by == "cpu":
        assert timeout.cpu_s > timeout.cpu_limit_s == cpu_floor_s
        assert timeout.seconds < timeout.limit_s
    else:
        assert timeout.seconds >= timeout.limit_s == 4.0  # seconds are recorded to the ms
    assert (timeout.cpu_limit_s is None) == (cpu_floor_s == 0)


@pytest.fixture(scope="module")
def guest_runner():
    """The guest runner module (standard library only, loaded from its file as the sandbox
    does; its own directory leaves sys.path again)."""
    import importlib.util
    import sys
    from pathlib import Path

    import editcredit.sandbox as sandbox_pkg

    path = Path(sandbox_pkg.__file__).parent / "guest" / "runner.py"
    before = list(sys.path)
    spec = importlib.util.spec_from_file_location("editcredit_guest_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.path[:] = before


WALL_AND_CPU = {
    "tests": {"t": 5.0},
    "default_s": 5.0,
    "cpu": {"tests": {"t": 1.0}, "default_s": 1.0},
}


@pytest.mark.parametrize(
    "limits,wall_s,cpu_s,limited_by",
    [
        (WALL_AND_CPU, 0.5, 0.4, None),  # within both
        (WALL_AND_CPU, 1.2, 1.1, "cpu"),  # a loop: past its CPU seconds, long before 5 s
        (WALL_AND_CPU, 5.1, 0.0, "wall"),  # a wait: no CPU, past the wall clock
        (WALL_AND_CPU, 4.0, None, None),  # /proc could not tell: the wall clock alone
        (WALL_AND_CPU, 5.1, None, "wall"),
        ({"tests": {}, "default_s": 5.0}, 4.0, 3.0, None),  # no CPU-time limit asked
        ({"tests": {}, "default_s": 5.0}, 5.1, 3.0, "wall"),
    ],
)
def test_which_limit_a_running_test_passed(guest_runner, limits, wall_s, cpu_s, limited_by):
    record = guest_runner._over_limit(limits, (3, "t", 100.0), 100.0 + wall_s, cpu_s)
    if limited_by is None:
        assert record is None
        return
    assert record["nodeid"] == "t" and record["index"] == 3 and record["limit_s"] == 5.0
    assert record.get("limited_by", "wall") == limited_by
    assert ("cpu_limit_s" in record) == ("cpu" in limits)


def test_a_process_cpu_seconds_are_read_from_outside_it(guest_runner):
    import os
    import time

    before = guest_runner._cpu_seconds(os.getpid())
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    after = guest_runner._cpu_seconds(os.getpid())
    assert after - before >= 0.25
    assert guest_runner._cpu_seconds(2**22 + 12345) is None  # no such process
