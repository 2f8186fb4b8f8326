"""A few multi-bug tasks frozen for real (generated and validated in docker) and their controls:
gold fixes all, the base tree none, each bug's fix alone exactly that bug's FAIL_TO_PASS."""

from __future__ import annotations

import json

from taskfactory import CONFIG

from editcredit.data.freeze import load_tasks
from editcredit.grading.controls import ControlRecord, ControlsSummary, run_controls, summarize
from editcredit.suites import multibugs as multi
from editcredit.suites.build import build_suite


def test_a_frozen_multibugs_suite_passes_its_per_bug_controls(
    tmp_path, docker_sandbox, monkeypatch
):
    monkeypatch.setattr(multi, "MULTI_PER_SINGLE", 0.3)  # a handful of multi-bug tasks
    cfg = {
        **CONFIG["suites"]["minibugs"],
        "generator": "multibugs",
        "modules": ["listops"],
        "mutants_per_function": 1,
    }
    cfg.pop("manifest_sha256")
    build_suite("multibugs", cfg, CONFIG["sandbox"], tmp_path)
    tasks = load_tasks(tmp_path / "tasks.parquet")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["schema_version"] == 4 and manifest["generator"]["multi"]
    several = [t for t in tasks if t.bugs]
    assert several and len(several) < len(tasks)
    for task in several:  # splits by seed function: a multi-bug task's functions share it
        singles = {t.meta.get("seed_function"): t.split for t in tasks if not t.bugs}
        assert {singles[f] for f in task.meta["seed_functions"]} == {task.split}
    weights = CONFIG["grading"]["f_weight"], CONFIG["grading"]["g_weight"]
    controls = [run_controls(task, docker_sandbox, *weights) for task in several[:2]]
    for task, control in zip(several, controls, strict=False):
        assert not control["flagged"], control["deviations"]
        assert control["gold"]["Y"] == 1 and control["empty"]["F"] == 0
        assert len(control["bugs"]) == len(task.bugs)
        for bug, record in zip(task.bugs, control["bugs"], strict=True):
            report = record["report"]
            passed = {i for i, t in report["tests"].items() if t["status"] == "passed"}
            assert passed & set(task.FAIL_TO_PASS) == set(bug.FAIL_TO_PASS)
            assert report["Y"] == 0 and 0 < report["F"] < 1  # partial progress
    summary = summarize(controls, "multibugs")
    assert summary["bug_controls_ok"] == summary["bug_controls"] > 0
    # the records the controls job writes: every key of their TypedDicts, in their order
    assert all(list(c) == list(ControlRecord.__annotations__) for c in controls)
    assert list(summary) == [k for k in ControlsSummary.__annotations__ if k != "training_pool"]
