"""The grading memo: each (task, tree, selection) graded once; nothing the machine decided kept."""

from __future__ import annotations

import threading

import pytest
from taskfactory import make_calc_task

from editcredit.agent.minibugs_env import visible_view
from editcredit.sandbox.base import CollectTimeout, SandboxReport, TestTimeout
from editcredit.sandbox.memo import GradingMemo, grading_key, reusable
from editcredit.sandbox.observations import Observations


def report(status="finished", timeouts=(), collect=None, tag=""):
    return SandboxReport(
        instance_id="t",
        backend="fake",
        isolation="none",
        patch_applied=status != "not_run",
        run_status=status,
        observations=Observations(started=True, finished=status == "finished"),
        seconds=0.1,
        log_tail=tag,
        timeouts=list(timeouts),
        collect_timeout=collect,
    )


class Counting:
    """A sandbox that hands out the next planned report and records what it was asked."""

    def __init__(self, *planned):
        self.planned = list(planned)
        self.calls = []
        self.closed = False
        self.workers = 3

    def grade(self, task, patch, select=None):
        self.calls.append((patch, tuple(select or ())))
        return self.planned.pop(0) if self.planned else report(tag=str(len(self.calls)))

    def close(self):
        self.closed = True


TIMEOUT = TestTimeout(nodeid="t.py::x", index=0, seconds=5.0, limit_s=5.0)


@pytest.mark.parametrize(
    "first, reused",
    [
        (report("finished"), True),
        (report("not_run"), True),  # the patch did not apply: nothing ran, nothing timed
        (report("timeout"), False),
        (report("sandbox_died"), False),
        (report("no_report"), False),
        (report("finished", timeouts=[TIMEOUT]), False),
        (report("finished", collect=CollectTimeout(seconds=11.0)), False),
    ],
)
def test_only_reports_of_runs_inside_their_limits_are_reused(first, reused):
    assert reusable(first) is reused
    box = Counting(first)
    memo = GradingMemo(box)
    task = make_calc_task()
    a, b = memo.grade(task, "p"), memo.grade(task, "p")
    assert a is first
    assert (b is first) is reused
    assert len(box.calls) == (1 if reused else 2)
    assert (memo.hits, memo.misses) == ((1, 1) if reused else (0, 2))


@pytest.mark.parametrize(
    "first, reused",
    [
        (report("finished", timeouts=[TIMEOUT]), True),
        (report("finished", collect=CollectTimeout(seconds=11.0)), True),
        (report("timeout"), True),
        (report("finished"), True),
        (report("not_run"), True),
        (report("sandbox_died"), False),  # the machine, not the tree: graded again
        (report("no_report"), False),
    ],
)
def test_the_experts_memo_keeps_runs_stopped_by_their_limits(first, reused):
    assert reusable(first, keep_timeouts=True) is reused
    box = Counting(first)
    memo = GradingMemo(box, keep_timeouts=True)
    task = make_calc_task()
    memo.grade(task, "p")
    assert (memo.grade(task, "p") is first) is reused
    assert len(box.calls) == (1 if reused else 2)


def test_the_key_is_task_patch_and_selection():
    task = make_calc_task()
    view = visible_view(task)
    keys = {
        grading_key(task, "p", None),
        grading_key(task, "q", None),
        grading_key(task, "p", ["test_calc.py::test_add"]),
        grading_key(view, "p", None),  # the same tree, fewer expected tests
    }
    assert len(keys) == 4
    assert grading_key(task, "p", None) == grading_key(make_calc_task(), "p", [])


def test_each_distinct_grading_runs_once_and_answers_are_the_first():
    box = Counting()
    memo = GradingMemo(box)
    task = make_calc_task()
    answers = [
        memo.grade(task, p, s)
        for p, s in [("x", None), ("y", None), ("x", None), ("x", ["a::b"]), ("x", ["a::b"])]
    ]
    assert box.calls == [("x", ()), ("y", ()), ("x", ("a::b",))]
    assert answers[2] is answers[0] and answers[4] is answers[3]
    assert memo.workers == 3  # other attributes pass through
    memo.close()
    assert box.closed


def test_concurrent_callers_of_one_key_wait_for_one_grading():
    gate = threading.Event()

    class Slow(Counting):
        def grade(self, task, patch, select=None):
            gate.wait(5)
            return super().grade(task, patch, select)

    box = Slow()
    memo = GradingMemo(box)
    task = make_calc_task()
    out = []
    threads = [threading.Thread(target=lambda: out.append(memo.grade(task, "p"))) for _ in range(4)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert len(box.calls) == 1 and len(out) == 4 and all(r is out[0] for r in out)


def test_a_failed_grading_is_raised_and_the_next_caller_grades_again():
    class Broken(Counting):
        def grade(self, task, patch, select=None):
            if not self.calls:
                self.calls.append("boom")
                raise RuntimeError("docker went away")
            return super().grade(task, patch, select)

    box = Broken()
    memo = GradingMemo(box)
    task = make_calc_task()
    with pytest.raises(RuntimeError, match="docker went away"):
        memo.grade(task, "p")
    assert memo.grade(task, "p").run_status == "finished"
    assert box.calls == ["boom", ("p", ())]


@pytest.mark.parametrize(
    "first, kept",
    [
        (report("finished", timeouts=[TIMEOUT]), True),
        (report("timeout"), True),
        (report("finished"), True),
        (report("sandbox_died"), False),  # the machine, not the tree: run again
        (report("no_report"), False),
    ],
)
def test_the_agents_own_runs_keep_runs_stopped_by_their_limits(first, kept):
    box = Counting(first)
    memo = GradingMemo(box)
    view = visible_view(make_calc_task())
    memo.observe(view, "p", ["test_calc.py::test_add"])
    assert (memo.observe(view, "p", ["test_calc.py::test_add"]) is first) is kept
    assert len(box.calls) == (1 if kept else 2)


def test_a_kept_observation_never_answers_a_grading_of_the_same_tree():
    looped = report("finished", timeouts=[TIMEOUT], tag="observed")
    box = Counting(looped)
    memo = GradingMemo(box)
    task = make_calc_task()
    assert memo.observe(task, "p") is looped
    graded = memo.grade(task, "p")  # the same task, patch and selection: run again
    assert graded is not looped and len(box.calls) == 2
    assert memo.grade(task, "p") is graded  # a clean grading is reused as before
    assert memo.observe(task, "p") is looped  # and the observation stays its own


def test_the_agents_run_goes_through_observe_where_the_sandbox_has_it():
    from editcredit.grading.grader import observe_tree

    looped = report("finished", timeouts=[TIMEOUT])
    box = Counting(looped)
    memo = GradingMemo(box)
    task = make_calc_task()
    view = visible_view(task)
    observe_tree(view, "p", memo, ["test_calc.py::test_add"])
    observe_tree(view, "p", memo, ["test_calc.py::test_add"])
    assert len(box.calls) == 1 and memo.hits == 1
    observe_tree(view, "p", box, ["test_calc.py::test_add"])  # a bare sandbox grades
    assert len(box.calls) == 2


def test_evaluations_wrappers_pass_the_agents_runs_on_as_observations():
    from editcredit.evaluation.job import LazySandbox
    from editcredit.evaluation.sandboxes import CountingSandbox, EpisodeSandbox, FaultySandbox
    from editcredit.grading.grader import observe_tree

    looped = report("finished", timeouts=[TIMEOUT])
    box = Counting(looped)
    memo = GradingMemo(box)
    faulty = FaultySandbox(LazySandbox(lambda: memo), rate=0.0, seed=0, mode="report")
    chain = EpisodeSandbox(CountingSandbox(faulty))
    view = visible_view(make_calc_task())
    for _ in range(3):
        observe_tree(view, "p", chain, ["test_calc.py::test_add"])
    assert len(box.calls) == 1 and memo.hits == 2
    chain.grade(view, "p", ["test_calc.py::test_add"])  # a grading is not answered by it
    assert len(box.calls) == 2
