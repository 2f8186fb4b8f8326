"""The replay check on real stored gradings: a real training segment (arm B, every eligible
trajectory queried) graded in the docker sandbox, re-graded through the same grader. It passes
unchanged, and a planted change to the observer (one passing test reported as failed) fails it,
with the failure record holding both reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from policyfactory import toy_tasks
from taskfactory import CONFIG

from editcredit.grading.grader import grade_patch
from editcredit.grading.stored_report import stored_report
from editcredit.job_records import attempts_dir
from editcredit.replay.job import ReplayMismatch, replay_job
from editcredit.replay.stored import read_segment
from editcredit.rl.records import CREDIT_SCHEMA, ROLLOUT_SCHEMA
from editcredit.sandbox.base import GUEST_DIR
from editcredit.workflow import logged

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ALL = {"fraction": 1.0, "minimum": 0}  # every replayable grading of the small study


def _replay(study, out: Path, replay=ALL, segment: Path | None = None):
    return replay_job(
        segments=[str(segment or study["segment"])],
        tasks_path=str(study["tasks"]),
        out=str(out),
        sandbox=CONFIG["sandbox"],
        grading=CONFIG["grading"],
        replay=replay,
        config={"test": True},
    )


def test_the_segment_stores_each_counterfactual_tree_and_its_report(study):
    ledger = pq.read_table(study["segment"] / "credit.parquet").to_pylist()
    sent = [r for r in ledger if r["cf_report"]]
    assert sent, "query_rate 1: every eligible trajectory is queried"
    for row in sent:
        report = json.loads(row["cf_report"])
        assert (
            report["instance_id"] == row["instance_id"]
            and report["tests"]
            or (report["verdict"] in ("empty_patch", "patch_does_not_apply"))
        )
        if row["available"]:
            assert row["U_counterfactual"] is not None


def test_replay_of_real_stored_gradings_passes(study, tmp_path):
    out = tmp_path / "results" / "replay" / "summary.json"
    summary = _replay(study, out)
    written = json.loads(out.read_text())
    assert written["identical"] == written["sampled"] == summary["replayable"] > 0
    assert written["mismatches"] == []
    assert written["sampled_by_kind"]["final"] > 0
    # the toy episodes edit once: the reverted block leaves the base tree, an empty patch that
    # is valid 0 without a run, so it is stored and counted but not replayable
    assert written["stored_by_kind"]["counterfactual"] > 0
    assert written["excluded"]["empty_patch"] >= written["stored_by_kind"]["counterfactual"]
    # identical trees (task, patch) graded once: the sampled gradings' distinct trees
    stored = {g.key: g for g in read_segment(study["segment"])}
    trees = {stored[s["key"]].tree for s in written["sample"]}
    assert written["trees_graded"] == len(trees) < written["sampled"]
    assert written["stored"] == written["replayable"] + sum(written["excluded"].values())
    assert written["grader"]["backend"] == "docker" and written["grader"]["observer_sha256"]
    graders = written["segment_graders"]
    assert len(graders) == 1 and graders[0]["changes"] == []  # the grader that trained
    assert "provenance" in written


def test_the_default_fraction_replays_its_minimum_when_the_study_is_small(study, tmp_path):
    summary = _replay(study, tmp_path / "summary.json", {"fraction": 0.05, "minimum": 3})
    assert summary["sampled"] == 3 and summary["identical"] == 3


def _planted_observer(tmp_path: Path) -> Path:
    """The guest code with one change: a passing ``...::test_mul`` call reported as failed."""
    guest = tmp_path / "guest"
    shutil.copytree(GUEST_DIR, guest, ignore=shutil.ignore_patterns("__pycache__"))
    path = guest / "observer.py"
    text = path.read_text()
    honest = '"outcome": report.outcome,'
    assert text.count(honest) == 1
    planted = (
        '"outcome": "failed" if report.when == "call" and report.passed and '
        'report.nodeid.endswith("::test_mul") else report.outcome,'
    )
    path.write_text(text.replace(honest, planted))
    return guest


def test_a_planted_change_to_the_observer_fails_the_replay_with_both_reports(
    study, tmp_path, monkeypatch
):
    monkeypatch.setattr("editcredit.sandbox.docker_backend.GUEST_DIR", _planted_observer(tmp_path))
    out = tmp_path / "summary.json"
    log = tmp_path / "logs" / "replay.log"
    with pytest.raises(ReplayMismatch) as failed, logged(log):
        _replay(study, out)
    message = str(failed.value)
    assert "re-graded stored gradings differ" in message
    assert "test_calc.py::test_mul: passed -> failed" in message
    assert "stored   {" in message and "replayed {" in message
    assert not out.exists()  # nothing half-written
    records = list(attempts_dir(log).glob("*.failed.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())["record"]
    mismatch = record["mismatches"][0]
    assert mismatch["key"] in message and mismatch["source"] in message
    assert mismatch["stored"]["tests"]["test_calc.py::test_mul"]["status"] == "passed"
    assert mismatch["replayed"]["tests"]["test_calc.py::test_mul"]["status"] == "failed"
    assert record["identical"] < record["sampled"]


def _copy(study, tmp_path: Path) -> Path:
    segment = tmp_path / "runs" / "B-s42" / "step_1"
    shutil.copytree(study["segment"], segment)
    return segment


def _rewrite(path: Path, schema: pa.Schema, index: int, **fields) -> None:
    rows = pq.read_table(path).to_pylist()
    rows[index].update(fields)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def test_a_counterfactual_tree_that_ran_is_re_graded_from_the_ledger(
    study, tmp_path, docker_sandbox
):
    """A ledger row holding a counterfactual tree that runs (the task's gold tree, graded by the
    real grader and stored as training stores it) is sampled and re-graded."""
    segment = _copy(study, tmp_path)
    ledger = pq.read_table(segment / "credit.parquet").to_pylist()
    index = next(i for i, row in enumerate(ledger) if row["cf_report"])
    task = next(t for t in toy_tasks() if t.instance_id == ledger[index]["instance_id"])
    weights = (CONFIG["grading"]["f_weight"], CONFIG["grading"]["g_weight"])
    report = stored_report(grade_patch(task, task.patch, docker_sandbox, *weights))
    assert report["verdict"] == "valid_1"
    _rewrite(
        segment / "credit.parquet",
        CREDIT_SCHEMA,
        index,
        cf_patch=task.patch,
        cf_report=json.dumps(report, sort_keys=True),
    )
    summary = _replay(study, tmp_path / "summary.json", segment=segment)
    assert summary["sampled_by_kind"]["counterfactual"] == 1
    assert summary["identical"] == summary["sampled"]
    key = f"counterfactual:{ledger[index]['rollout_key']}"
    assert key in {s["key"] for s in summary["sample"]}


def test_an_edited_stored_status_fails_the_replay_naming_it(study, tmp_path):
    segment = _copy(study, tmp_path)
    rows = pq.read_table(segment / "rollouts.parquet").to_pylist()
    index = next(
        i
        for i, row in enumerate(rows)
        if json.loads(row["report"]).get("tests", {}).get("test_calc.py::test_add")
    )
    report = json.loads(rows[index]["report"])
    old = report["tests"]["test_calc.py::test_add"]["status"]
    new = "failed" if old == "passed" else "passed"
    report["tests"]["test_calc.py::test_add"]["status"] = new
    _rewrite(
        segment / "rollouts.parquet",
        ROLLOUT_SCHEMA,
        index,
        report=json.dumps(report, sort_keys=True),
    )
    with pytest.raises(ReplayMismatch) as failed:
        _replay(study, tmp_path / "summary.json", segment=segment)
    message = str(failed.value)
    assert f"final:{rows[index]['rollout_key']}" in message
    assert f"rollouts.parquet row {index}" in message
    assert f"test test_calc.py::test_add: {new} -> {old}" in message
