"""The report store: a study's jobs share each distinct grading; nothing else answers it."""

from __future__ import annotations

from pathlib import Path

import pytest
from taskfactory import CONFIG, make_calc_task
from test_memo import TIMEOUT, report

from editcredit.sandbox.base import SandboxReport
from editcredit.sandbox.memo import GradingMemo
from editcredit.sandbox.report_store import (
    ReportStore,
    ReportStoreError,
    absolute_store,
    open_report_store,
    store_identity,
)

IDENTITY = {"backend": "fake", "image_id": "sha256:1", "mem_limit": "1g"}
LIMITS = {"default_s": 5.0, "tests": {"t.py::x": 0.25}}
KEY_ARGS = ("grade", "a" * 64, "patch", ["t.py::x"], LIMITS)


class Limited:
    """A sandbox that tells its limits and counts its gradings (one planned report each)."""

    def __init__(self, *planned: SandboxReport, limits=LIMITS) -> None:
        self.planned = list(planned)
        self.calls = 0
        self.limits = limits

    def limits_for(self, task):
        return self.limits

    def grade(self, task, patch, select=None):
        self.calls += 1
        return self.planned.pop(0) if self.planned else report(tag=f"graded {self.calls}")

    def close(self):
        pass


@pytest.mark.parametrize(
    "changed",
    [
        ("observe", "a" * 64, "patch", ["t.py::x"], LIMITS),
        ("grade", "b" * 64, "patch", ["t.py::x"], LIMITS),
        ("grade", "a" * 64, "patch2", ["t.py::x"], LIMITS),
        ("grade", "a" * 64, "patch", [], LIMITS),
        ("grade", "a" * 64, "patch", ["t.py::x"], {**LIMITS, "default_s": 6.0}),
    ],
)
def test_every_part_of_a_grading_names_its_entry(tmp_path, changed):
    store = ReportStore(tmp_path, IDENTITY)
    assert store.key(*KEY_ARGS) == store.key(*KEY_ARGS)
    assert store.key(*changed) != store.key(*KEY_ARGS)


def test_another_grader_reads_nothing_of_this_ones(tmp_path):
    ours = ReportStore(tmp_path, IDENTITY)
    theirs = ReportStore(tmp_path, {**IDENTITY, "image_id": "sha256:2"})
    ours.put(ours.key(*KEY_ARGS), report(tag="ours"))
    assert theirs.get(theirs.key(*KEY_ARGS)) is None
    assert ours.get(ours.key(*KEY_ARGS)).log_tail == "ours"


def test_an_entry_is_written_whole_once_and_never_replaced(tmp_path):
    store = ReportStore(tmp_path, IDENTITY)
    key = store.key(*KEY_ARGS)
    first = report(tag="first")
    store.put(key, first)
    store.put(key, report(tag="second"))
    assert store.get(key) == first
    assert store.writes == 1
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{key}.json"]


def test_an_entry_changed_by_hand_is_an_error_naming_its_file(tmp_path):
    store = ReportStore(tmp_path, IDENTITY)
    key = store.key(*KEY_ARGS)
    store.put(key, report())
    store.path(key).write_text('{"instance_id": "t"}')
    with pytest.raises(ReportStoreError, match=str(store.path(key))):
        store.get(key)


def test_a_second_job_reads_the_first_ones_reports_instead_of_grading(tmp_path):
    task = make_calc_task()
    first_box, second_box = Limited(), Limited()
    first = GradingMemo(first_box, store=ReportStore(tmp_path, IDENTITY))
    graded = first.grade(task, "p", ["t.py::x"])
    seen = first.observe(task, "p", ["t.py::x"])  # an observation is keyed apart
    second = GradingMemo(second_box, store=ReportStore(tmp_path, IDENTITY))
    assert second.grade(task, "p", ["t.py::x"]) == graded
    assert second.observe(task, "p", ["t.py::x"]) == seen
    assert (first_box.calls, second_box.calls) == (2, 0)
    assert (second.misses, second.stored) == (0, 2)
    second.grade(task, "other patch")  # a new key is graded
    assert (second_box.calls, second.misses) == (1, 1)
    second.grade(task, "other patch")
    assert second.counts() == {"run": 1, "read_from_store": 2, "answered_in_memory": 1}


@pytest.mark.parametrize(
    "first, kept_for_gradings, kept_for_observations",
    [
        (report("finished"), True, True),
        (report("finished", timeouts=[TIMEOUT]), False, True),
        (report("timeout"), False, True),
        (report("sandbox_died"), False, False),
    ],
)
def test_the_store_keeps_what_the_memo_would_keep(
    tmp_path, first, kept_for_gradings, kept_for_observations
):
    task = make_calc_task()
    for kind, kept in (("grade", kept_for_gradings), ("observe", kept_for_observations)):
        root = tmp_path / kind
        getattr(GradingMemo(Limited(first), store=ReportStore(root, IDENTITY)), kind)(task, "p")
        later = Limited()
        getattr(GradingMemo(later, store=ReportStore(root, IDENTITY)), kind)(task, "p")
        assert later.calls == (0 if kept else 1), kind


def test_a_grading_with_its_timeouts_kept_never_answers_a_strict_one(tmp_path):
    """The experts' corpus keeps time-limited gradings; an evaluation's grading must not
    read them."""
    task = make_calc_task()
    looping = report("finished", timeouts=[TIMEOUT])
    GradingMemo(Limited(looping), keep_timeouts=True, store=ReportStore(tmp_path, IDENTITY)).grade(
        task, "p"
    )
    strict = Limited()
    GradingMemo(strict, store=ReportStore(tmp_path, IDENTITY)).grade(task, "p")
    assert strict.calls == 1


def test_other_limits_are_another_grading(tmp_path):
    task = make_calc_task()
    GradingMemo(Limited(), store=ReportStore(tmp_path, IDENTITY)).grade(task, "p")
    slower = Limited(limits={**LIMITS, "default_s": 50.0})
    GradingMemo(slower, store=ReportStore(tmp_path, IDENTITY)).grade(task, "p")
    assert slower.calls == 1


def test_the_config_names_the_store_and_empty_turns_it_off(tmp_path, monkeypatch):
    cfg = {"report_store": "cache/gradings", "mem_limit": "1g", "pids_limit": 256}
    cfg["timeout_factor"] = 1.0
    grader = {"backend": "local", "grader_sha256": "x"}
    monkeypatch.chdir(tmp_path)
    store = open_report_store(cfg, grader)
    assert store.root == Path(tmp_path, "cache/gradings").resolve()
    assert store.identity == {**grader, "mem_limit": "1g", "pids_limit": 256, "timeout_factor": 1.0}
    assert store_identity({**cfg, "pids_limit": 64}, grader) != store.identity
    assert open_report_store({**cfg, "report_store": ""}, grader) is None
    # a Ray actor may run elsewhere: the train job hands its workers an absolute path
    assert absolute_store(cfg)["report_store"] == str(store.root)
    assert absolute_store({**cfg, "report_store": ""})["report_store"] == ""


@pytest.mark.docker
def test_a_real_grading_read_back_judges_as_it_did(docker_ready, tmp_path):
    """Two jobs, each with its own docker sandbox: the second reads the first one's reports,
    and they judge as the first one's did (the grader reads only what the tests did)."""
    from editcredit.grading.grader import grade_patch
    from editcredit.sandbox.factory import make_sandbox

    task = make_calc_task()
    cfg = {**CONFIG["sandbox"], "report_store": str(tmp_path)}
    cfg["test_limits"] = {**cfg["test_limits"], "measure_gold": False}  # the same limits
    grader = {"backend": "docker", "image_id": "named by the test"}
    verdicts = []
    for job in range(2):
        with make_sandbox("docker", cfg) as box:
            memo = GradingMemo(box, store=open_report_store(cfg, grader))
            verdict = grade_patch(task, task.patch, memo, 0.25, 0.25)
            seen = memo.observe(task, task.patch)  # the agent's own run of the same tree
            verdicts.append((verdict.model_dump(), seen.observations.model_dump()))
            assert (memo.misses, memo.stored) == ((2, 0) if job == 0 else (0, 2))
    assert verdicts[0][0]["Y"] == 1
    assert verdicts[1] == verdicts[0]


def test_a_job_without_a_store_never_asks_for_the_grader(monkeypatch):
    """Naming the grader may start a container (the image's versions): only a store needs it."""
    from editcredit.grading import grader_identity

    def asked(cfg):
        raise AssertionError("the grader's identity was looked up")

    monkeypatch.setattr(grader_identity, "grader_identity", asked)
    assert grader_identity.study_report_store({"report_store": ""}) is None
