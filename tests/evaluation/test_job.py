"""The evaluation jobs end to end with planted policies: plan, slot files, scores, faults."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from evalfakes import (
    FakeChat,
    ScriptedGenerator,
    by_task,
    holdout,
    plan_planted,
    planted_study,
    submit_only,
)
from jobfactory import eval_files, eval_settings

from editcredit.config import schema_of, section_config
from editcredit.evaluation.job import eval_model_job, scores_job
from editcredit.evaluation.ledger import INFRA_AFTER_PATCH, INFRA_BEFORE_PATCH, UNRESOLVED_VERDICT
from editcredit.evaluation.sandboxes import CountingSandbox
from editcredit.io.provenance import read_provenance


def eval_cfg(**faults):
    """Settings overrides: seed 11, batches of 4, one retry each, ``faults`` planted."""
    cfg = {
        "evaluation.seed": 11,
        "evaluation.batch_size": 4,
        "evaluation.limits": {"regrade": 1, "regenerate": 1},
    }
    return {**cfg, **{f"evaluation.faults.{k}": v for k, v in faults.items()}}


@pytest.fixture
def study(tmp_path, monkeypatch):
    """A frozen suite of 4 toy tasks, a fake model directory, a plan for model 'planted'."""
    monkeypatch.chdir(tmp_path)
    return planted_study(samples=3)


def run_job(study, script, make_sandbox, cfg, storage=None):
    tasks_path, model_dir = study
    chat = FakeChat()
    generator = ScriptedGenerator(chat, script)
    out = Path("results/eval/planted/holdout")
    job = eval_files(model_dir, tasks_path)
    assert Path(job.slots) == out / "slots.parquet"
    summary = eval_model_job(
        job,
        eval_settings(cfg),
        gpus=0,
        threads=1,
        config={"c": 1},
        make_sandbox=make_sandbox,
        load_policy_fn=lambda: (generator, chat),
        storage=storage,
    )
    scores = scores_job(
        str(out / "slots.parquet"),
        "results/eval/plan.parquet",
        "planted",
        "holdout",
        str(out / "scores.json"),
        {"c": 1},
    )
    return out, summary, scores, generator


def _body(path: Path) -> dict:
    body = json.loads(path.read_text())
    body.pop("provenance")
    return body


def task_files(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("toy__*.json"))}


def test_a_model_whose_patches_are_all_empty_scores_exactly_zero_without_grading(study):
    made = []

    def make_sandbox():
        made.append(1)
        raise AssertionError("no sandbox should be started")

    out, summary, scores, generator = run_job(study, submit_only, make_sandbox, eval_cfg())
    assert made == [] and generator.calls > 0
    assert scores["score"] == 0.0 and scores["bounds"] == [0.0, 0.0] and scores["resolved"]
    assert scores["N"] == 12 and scores["K"] == 12
    files = task_files(out)
    assert len(files) == 4
    for body in files.values():
        assert body["provenance"]["inputs"]
        for slot in body["slots"]:
            assert (slot["state"], slot["verdict"], slot["reason"]) == ("decided", 0, "empty_patch")
            assert [a["kind"] for a in slot["attempts"]] == ["generate", "grade"]
            assert all(a["sandbox_runs"] == 0 for a in slot["attempts"])
    preds = [json.loads(x) for x in (out / "predictions/sample_0.jsonl").read_text().splitlines()]
    assert len(preds) == 4
    assert set(preds[0]) == {"instance_id", "model_name_or_path", "model_patch"}
    assert preds[0]["model_patch"] == "" and preds[0]["model_name_or_path"] == "planted"


def test_injected_sandbox_faults_stay_within_the_limits_and_a_rerun_changes_nothing(
    study, local_sandbox
):
    counter = CountingSandbox(local_sandbox)
    cfg = eval_cfg(rate=0.4, seed=5, mode="mixed")
    out, summary, scores, _ = run_job(study, by_task, lambda: counter, cfg)
    assert summary["faults"]["injected"] > 0
    kinds = Counter()
    for body in task_files(out).values():
        for slot in body["slots"]:
            attempts = slot["attempts"]
            kinds.update(a["kind"] for a in attempts)
            assert slot["state"] in ("decided", "unresolved")
            assert sum(a["kind"] == "regenerate" for a in attempts) <= 1
            assert sum(a["kind"] == "regrade" for a in attempts) <= 1
            assert sum(a["outcome"] == "report" for a in attempts) <= 1  # decided once
            assert [a["index"] for a in attempts] == list(range(len(attempts)))
            if slot["state"] == "unresolved":
                assert slot["verdict"] is None
                assert slot["reason"] in (INFRA_BEFORE_PATCH, INFRA_AFTER_PATCH, UNRESOLVED_VERDICT)
            for a in attempts:
                if a["outcome"] == "infra_failure":
                    assert a["evidence"]  # the evidence is kept
    assert kinds["regenerate"] > 0 and kinds["regrade"] > 0  # both retries were exercised
    table = pq.read_table(out / "slots.parquet").to_pylist()
    assert len(table) == 12
    details = {
        (b["instance_id"], slot["sample"]): slot["detail"]
        for b in task_files(out).values()
        for slot in b["slots"]
    }
    assert {(r["instance_id"], r["sample"]): r["detail"] for r in table} == details
    unresolved = Counter(r["reason"] for r in table if r["state"] == "unresolved")
    assert scores["unresolved_by_reason"] == dict(sorted(unresolved.items()))
    if unresolved:
        assert scores["score"] is None
        lo, hi = scores["bounds"]
        assert hi - lo == pytest.approx(sum(unresolved.values()) / 12)

    for k in range(3):  # a prediction for every slot whose generation produced a patch
        lines = (out / f"predictions/sample_{k}.jsonl").read_text().splitlines()
        with_patch = [
            b
            for b in task_files(out).values()
            if any(a["outcome"] == "patch" for a in b["slots"][k]["attempts"])
        ]
        assert len(lines) == len(with_patch)
    journal = Path(summary["journal"])
    journal_bytes = journal.read_bytes()
    before = {p: _body(p) for p in out.glob("toy__*.json")}
    table = pq.read_table(out / "slots.parquet").to_pylist()
    calls = counter.calls
    _, again, _, generator = run_job(study, by_task, lambda: counter, cfg)
    assert counter.calls == calls and generator.calls == 0
    made = summary["resumed_attempts"] + sum(summary["attempts"].values())
    assert again["attempts"] == {} and again["resumed_attempts"] == made
    assert journal.read_bytes() == journal_bytes  # not one attempt more
    for path, body in before.items():
        assert _body(path) == body, path  # (provenance aside: the code commit may move)
    assert pq.read_table(out / "slots.parquet").to_pylist() == table
    assert read_provenance(out / "slots.parquet")["inputs"]


def test_a_changed_plan_is_a_new_version_and_keeps_the_attempts_of_unchanged_slices(study):
    tasks_path, model_dir = study
    first = json.loads(Path("results/eval/plan.json").read_text())
    assert first["version"] == 1 and first["slots"] == 12
    assert read_provenance("results/eval/plan.parquet")["inputs"] == first["provenance"]["inputs"]
    out, summary, _, _ = run_job(study, submit_only, lambda: None, eval_cfg())
    # add a second eval set: a new plan version; the holdout slice and its journal are unchanged
    plan_planted(tasks_path, model_dir, {"holdout": holdout(3), "broad": holdout(1, max_tasks=2)})
    second = json.loads(Path("results/eval/plan.json").read_text())
    assert second["version"] == 2 and second["slots"] == 14
    assert [v["version"] for v in second["versions"]] == [1, 2]
    assert len(list(Path("results/eval/plans").glob("*.parquet"))) == 2
    _, again, _, generator = run_job(study, submit_only, lambda: None, eval_cfg())
    assert generator.calls == 0 and again["journal"] == summary["journal"]
    body = task_files(out)["toy__calc__0"]
    assert body["plan_version"] == 2 and body["plan_sha256"] == second["plan_sha256"]


def test_too_few_free_inodes_stop_the_job_before_a_batch_and_a_rerun_resumes(study, monkeypatch):
    """Storage (METHOD §5): the monitor reads the file system before each round and batch; at
    five free inodes the job stops with a receipt and writes no declared output; the journal
    keeps the first batch, and the next run (disk freed) resumes from it."""
    from types import SimpleNamespace

    from editcredit.storage import monitor as mon
    from editcredit.storage.monitor import StorageLow

    calls = []

    def statvfs(path):  # plenty for: before round 1, before batch 1; then five inodes
        calls.append(path)
        inodes = 10**6 if len(calls) <= 2 else 5
        return SimpleNamespace(f_bavail=10**7, f_frsize=4096, f_favail=inodes, f_files=10**7)

    monkeypatch.setattr(mon, "statvfs", statvfs)
    floor = {"min_free_disk_gb": 1.0, "min_free_inodes": 100}
    with pytest.raises(StorageLow, match="before round 1 batch 2: 5 inodes free") as err:
        run_job(study, submit_only, lambda: None, eval_cfg(), storage=floor)
    out = Path("results/eval/planted/holdout")
    assert not (out / "slots.parquet").exists() and not (out / "predictions").exists()
    assert not list(out.glob("toy__*.json"))
    assert err.value.receipt == Path("logs/storage/eval_model/planted/holdout/1.json")
    receipt = json.loads(err.value.receipt.read_text())
    assert (
        receipt["where"] == "before round 1 batch 2" and receipt["floor"]["min_free_inodes"] == 100
    )

    monkeypatch.setattr(
        mon,
        "statvfs",
        lambda p: SimpleNamespace(f_bavail=10**7, f_frsize=4096, f_favail=10**6, f_files=10**7),
    )
    _, summary, scores, generator = run_job(
        study, submit_only, lambda: None, eval_cfg(), storage=floor
    )
    assert summary["resumed_attempts"] == 8  # batch 1: four generations and their gradings
    assert scores["N"] == 12 and (out / "slots.parquet").is_file()
    assert list(Path("logs/storage/eval_model/planted/holdout").glob("*.json")) == [
        err.value.receipt
    ]


@pytest.mark.parametrize("recorded", [True, False])
def test_the_pool_grades_with_the_control_rules_recorded_gold_times(study, monkeypatch, recorded):
    """The job's own pool (the local backend) is limited by the gold times of
    ``job.gold_times``: a task recorded there is held to their limits with no gold run of the
    job's; without records every graded task is run against the floors (none of its tests
    reaches one, so no gold run either). The directory is an input of the slot files."""
    from taskfactory import count_gold_runs, count_limits, write_control_records

    tasks_path, model_dir = study
    ids = [f"toy__calc__{i}" for i in range(4)]
    timings = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 2.0}}
    records = write_control_records(
        "results/controls/toy/tasks", dict.fromkeys(ids, timings) if recorded else {}
    )
    measured, runs = count_gold_runs(monkeypatch), count_limits(monkeypatch)
    chat = FakeChat()
    job = eval_files(model_dir, tasks_path, gold_times=records)
    eval_model_job(
        job,
        eval_settings(eval_cfg()),
        gpus=0,
        threads=1,
        config={"c": 1},
        load_policy_fn=lambda: (ScriptedGenerator(chat, by_task), chat),
    )
    assert measured == [] and {i for i, _ in runs} == set(ids)
    assert {timed for _, timed in runs} == {recorded}
    out = Path("results/eval/planted/holdout")
    for body in task_files(out).values():
        assert records not in body["provenance"]["inputs"]  # clock-dependent
        for slot in body["slots"]:
            assert slot["state"] in ("decided", "unresolved")
    assert records not in read_provenance(out / "slots.parquet")["inputs"]


def test_a_missing_gold_times_directory_stops_the_job_naming_it(study):
    tasks_path, model_dir = study
    job = eval_files(model_dir, tasks_path, gold_times="results/controls/toy/tasks")
    with pytest.raises(ValueError, match="results/controls/toy/tasks: no control rule's"):
        eval_model_job(
            job,
            eval_settings(eval_cfg()),
            gpus=0,
            threads=1,
            config={"c": 1},
            make_sandbox=lambda: None,
            load_policy_fn=lambda: (None, None),
        )
    assert not Path("results/eval/planted/holdout/slots.parquet").exists()


@pytest.mark.parametrize(
    ("counts", "sandboxes"),
    [
        ({"workers": 2, "eval_workers": 3}, 3),
        # an older config (no eval_workers): the schema's default, as for any key
        ({"workers": 2}, schema_of("sandbox.eval_workers")["default"]),
    ],
)
def test_the_pool_factory_shares_the_book_with_every_sandbox(counts, sandboxes):
    from taskfactory import CONFIG

    from editcredit.evaluation.job import _pool_factory
    from editcredit.sandbox.limits import GoldTimes, GoldTimesBook
    from editcredit.settings import SandboxSettings

    sandbox = {k: v for k, v in CONFIG["sandbox"].items() if k != "eval_workers"}
    sandbox = {**sandbox, "backend": "local", **counts}
    settings = SandboxSettings.from_mapping(section_config("sandbox", sandbox))
    book = GoldTimesBook({"a": GoldTimes(0.1, {"t.py::x": 1.0})})
    memo = _pool_factory(settings, book)()
    try:
        assert memo.gold_times is book
        assert [box.gold_times for box in memo.sandbox._all] == [book] * sandboxes
        assert settings.eval_workers == sandboxes  # the grading threads: as many
    finally:
        memo.close()
