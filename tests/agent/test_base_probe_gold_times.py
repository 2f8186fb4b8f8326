"""The base_model and probe jobs grade with the control rule's recorded gold times: their
sandbox pools (the local backend here) are given the book, so a task the control rule timed
is held to the limits of its recorded times with no gold run of the job's own; a task without
records is run against the floors (and, as none of its tests reaches one, costs no gold run
either)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobfactory import job_settings
from policyfactory import toy_tasks
from taskfactory import CONFIG, count_gold_runs, write_control_records

from editcredit.agent import base_job, probe_job
from editcredit.config import schema_of, section_config
from editcredit.data.freeze import write_parquet
from editcredit.job_settings import ProbeJobSettings

TIMINGS = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 2.0}}
LOCAL = {**CONFIG["sandbox"], "backend": "local", "workers": 2}


@pytest.fixture
def measured(monkeypatch):
    """The task ids the local sandboxes spend a gold run on."""
    return count_gold_runs(monkeypatch)


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """In a scratch cwd: three toy tasks (train, dev, holdout) and the control rule's records,
    with times for the first two only."""
    monkeypatch.chdir(tmp_path)
    tasks = [
        t.model_copy(update={"split": split})
        for t, split in zip(toy_tasks(3), ["train", "dev", "holdout"], strict=True)
    ]
    path = Path("data/frozen/toy/tasks.parquet")
    path.parent.mkdir(parents=True)
    write_parquet(tasks, path)
    ids = [t.instance_id for t in tasks]
    records = write_control_records("results/controls/toy/tasks", dict.fromkeys(ids[:2], TIMINGS))
    return str(path), records, ids


def grade_each(tasks, pool, timed: dict[str, bool]):
    """One grading of every task's gold patch in ``pool`` (what the planted players do);
    ``timed``: each task's id -> whether its limits came from gold times."""
    for task in tasks:
        report = pool.grade(task, task.patch)
        assert report.observations.finished and not report.timeouts
        timed[task.instance_id] = report.limits["gold_timed"]


@pytest.mark.parametrize("with_records", [True, False])
def test_the_experts_corpus_is_graded_with_the_recorded_times(
    suite, measured, monkeypatch, with_records
):
    tasks_path, records, ids = suite
    played, timed = [], {}

    def expert_corpus(tasks, pool, experts, make_env, turns, workers, guard):
        played.extend(t.instance_id for t in tasks)
        grade_each(tasks, pool, timed)
        return [], []

    monkeypatch.setattr(base_job, "expert_corpus", expert_corpus)
    monkeypatch.setattr(base_job, "fit_base_model", lambda *a, **k: {})
    base_job.base_model_job(
        model_cfg={"experts": {}, "seed": 0},
        agent_cfg=CONFIG["agent"],
        sandbox_cfg=LOCAL,
        tasks_path=tasks_path,
        controls_path=None,
        out_dir="models/base/toy",
        gpus=0,
        gold_times=records if with_records else None,
    )
    assert played == ids[:1]  # the train split
    assert timed == {ids[0]: with_records} and measured == []


def test_a_missing_gold_times_directory_stops_the_base_model_naming_it(suite, monkeypatch):
    tasks_path, _, _ = suite
    monkeypatch.setattr(base_job, "expert_corpus", pytest.fail)
    with pytest.raises(ValueError, match="results/controls/nope/tasks: no control rule's"):
        base_job.base_model_job(
            model_cfg={"experts": {}, "seed": 0},
            agent_cfg=CONFIG["agent"],
            sandbox_cfg=LOCAL,
            tasks_path=tasks_path,
            controls_path=None,
            out_dir="models/base/toy",
            gpus=0,
            gold_times="results/controls/nope/tasks",
        )


def test_the_probe_grades_with_the_recorded_times(suite, measured, monkeypatch):
    """Every split the probe plays is graded in the pool of the recorded book: the two timed
    tasks are held to their recorded times, the third to the floors, and none costs a gold
    run; the records are an input of the probe."""
    tasks_path, records, ids = suite
    timed = {}

    def rollout_grade_and_query(tasks, samples, key_prefix, pool, *rest):
        grade_each(tasks, pool, timed)
        return [], []

    monkeypatch.setattr(probe_job, "load_policy", lambda *a: (None, None))
    monkeypatch.setattr(probe_job, "rollout_grade_and_query", rollout_grade_and_query)
    monkeypatch.setattr(probe_job, "probe_figures", lambda *rows: dict.fromkeys(probe_job.TARGETS))
    Path("models/base/toy").mkdir(parents=True)  # a provenance input only: no policy loads
    settings = job_settings(
        ProbeJobSettings, {"sandbox.backend": "local", "sandbox.workers": 2, "probe.threads": 1}
    )
    probe_job.probe_job(
        model_dir="models/base/toy",
        tasks_path=tasks_path,
        settings=settings,
        out_json="results/base/toy/probe.json",
        out_trajectories="results/base/toy/probe_trajectories.parquet",
        gpus=0,
        config={"test": True},
        gold_times=records,
    )
    assert timed == {ids[0]: True, ids[1]: True, ids[2]: False} and measured == []
    probe = json.loads(Path("results/base/toy/probe.json").read_text())
    assert records not in probe["provenance"]["inputs"]  # clock-dependent


@pytest.mark.parametrize(
    ("sandbox", "workers"),
    [
        ({**LOCAL, "expert_workers": 5}, 5),
        # an older config (no expert_workers): the schema's default, as for any key
        (
            section_config("sandbox", {k: v for k, v in LOCAL.items() if k != "expert_workers"}),
            schema_of("sandbox.expert_workers")["default"],
        ),
    ],
)
def test_the_experts_play_in_the_configured_number_of_sandboxes(
    suite, monkeypatch, sandbox, workers
):
    tasks_path, _, _ = suite
    seen = {}

    def expert_corpus(tasks, pool, experts, make_env, turns, threads, guard):
        seen.update(sandboxes=pool.workers, threads=threads)
        return [], []

    monkeypatch.setattr(base_job, "expert_corpus", expert_corpus)
    base_job.play_expert_corpus([], {"experts": {}, "seed": 0}, CONFIG["agent"], sandbox)
    assert seen == {"sandboxes": workers, "threads": workers}
