"""Deleting and rebuilding a training segment, an evaluation job or the tables gives the same
bytes (docs/design.md, "Records do not drift"): what the clock, the disk or the host decides
lives in volatile sidecars (``*.volatile.json``, ``editcredit.io.volatile.volatile_sidecar``)
that nothing hashes, and the cost table, the one reader of the sidecars, is the only table a
rerun of an upstream job changes.

The segment and the evaluation run for real: a small trained policy, the docker sandbox, one
GRPO step of arm M, the no-learning control's replay of that step, and a fresh evaluation (its
journal deleted too) of the segment's model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jobfactory import NO_RAY, eval_settings, run_control_replay, run_segment
from policyfactory import toy_tasks, train_toy_policy
from taskfactory import CONFIG, TOY_AGENT, write_control_records

from editcredit.data.freeze import write_parquet
from editcredit.evaluation.job import EvalModelJob, eval_model_job, plan_job, scores_job
from editcredit.io.provenance import read_provenance
from editcredit.io.volatile import is_volatile, volatile_sidecar

RUN = "M-s42"
AGENT = {**TOY_AGENT, "max_turns": 3, "max_new_tokens": 24}
TASKS = "data/frozen/toy/tasks.parquet"
SEGMENT = f"runs/{RUN}/step_1"
EVAL = f"results/eval/{RUN}/holdout"
CONTROL = "results/training/control/s42.parquet"
GOLD_TIMES = "results/controls/toy/tasks"


def record_gold_times(tasks) -> str:
    """The control rule's recorded gold times of ``tasks``, as the workflow's graded jobs read
    them (``results/controls/{suite}/tasks``): every job of a study derives its per-test limits
    from these one recording, so no job's bytes depend on how busy the machine was when it ran
    (with no recording each job would time the gold runs itself)."""
    return write_control_records(
        GOLD_TIMES,
        {
            task.instance_id: {
                "collect_s": 0.1,
                "tests": {test: 0.001 for test in task.FAIL_TO_PASS + task.PASS_TO_PASS},
            }
            for task in tasks
        },
    )


def output_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the volatile sidecars (and Snakemake's marker)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not is_volatile(p) and p.name != ".snakemake_timestamp"
    }


def assert_same_bytes(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    assert sorted(after) == sorted(before)
    differ = [name for name in before if before[name] != after[name]]
    assert not differ, f"rebuilt with other bytes: {differ}"


@pytest.mark.docker
@pytest.mark.slow
def test_a_rebuilt_segment_and_evaluation_write_the_same_bytes(
    tmp_path, monkeypatch, docker_sandbox
):
    monkeypatch.chdir(tmp_path)
    base = train_toy_policy(
        Path("models/base/toy"), docker_sandbox, give_up=0.5, sft_steps=120, agent=TOY_AGENT
    )
    Path(TASKS).parent.mkdir(parents=True)
    write_parquet(toy_tasks(2), Path(TASKS))
    gold_times = record_gold_times(toy_tasks(2))
    overrides = {
        **NO_RAY,
        "training.segment_steps": 1,
        "training.grpo.tasks_per_step": 2,
        "training.grpo.group_size": 3,
        "training.grpo.micro_batch_size": 4,
        "training.grpo.lr": 0.01,
        "agent.max_turns": AGENT["max_turns"],
        "agent.max_new_tokens": AGENT["max_new_tokens"],
        "agent.candidates": AGENT["candidates"],
    }

    def segment() -> dict[str, bytes]:
        run_segment(
            RUN, 1, base, SEGMENT, TASKS, overrides, gold_times=gold_times, budget={"steps": 5}
        )
        return output_bytes(Path(SEGMENT))

    first = segment()
    sidecar = Path(volatile_sidecar(f"{SEGMENT}/segment.json"))
    timings = json.loads(sidecar.read_text())
    assert timings["seconds"] > 0 and timings["budget_spent"]["wall_seconds"] > 0
    assert {"metrics.parquet", "rollouts.parquet", "segment.json", "identity.json"} <= set(first)
    assert "model/model.safetensors" in first and "state/optimizer.pt" in first
    receipt = json.loads(first["segment.json"])
    assert "wall_seconds" not in receipt["budget"]["spent"] and "seconds" not in receipt
    shutil.rmtree(SEGMENT)
    assert_same_bytes(first, segment())
    assert json.loads(sidecar.read_text())["seconds"] != timings["seconds"]  # measured again

    def control() -> dict[str, bytes]:
        replay = {**overrides, "training.endpoint_step": 1}
        run_control_replay(42, base, CONTROL, TASKS, replay, gold_times=gold_times)
        return output_bytes(Path(CONTROL).parent)

    first = control()
    assert sorted(first) == ["s42.json", "s42.parquet"]
    assert json.loads(Path(volatile_sidecar(CONTROL)).read_text())["seconds"] > 0
    shutil.rmtree(Path(CONTROL).parent)
    assert_same_bytes(first, control())

    model_dir = f"{SEGMENT}/model"
    models = {
        RUN: {
            "dir": model_dir,
            "run": RUN,
            "step": 1,
            "diagnostic": False,
            "evalsets": [],
            "samples": 0,
        }
    }
    holdout = {"suite": "toy", "splits": ["train"], "samples": 2, "max_tasks": 0}
    evalsets = {"holdout": {**holdout, "with_training_pool": False}}
    plan_job([TASKS], models, evalsets, "results/eval/plan.parquet", "results/eval/plan.json", {})
    eval_job = EvalModelJob(
        model=RUN,
        evalset="holdout",
        plan="results/eval/plan.parquet",
        model_dir=model_dir,
        tasks=TASKS,
        slots=f"{EVAL}/slots.parquet",
        predictions=f"{EVAL}/predictions",
        gold_times=gold_times,
    )
    settings = eval_settings(
        {
            "evaluation.seed": 11,
            "evaluation.batch_size": 4,
            "evaluation.limits": {"regrade": 1, "regenerate": 1},
            "evaluation.faults": {"rate": 0.0, "seed": 0, "mode": "report"},
            "agent.max_turns": AGENT["max_turns"],
            "agent.max_new_tokens": AGENT["max_new_tokens"],
            "agent.max_context_tokens": CONFIG["agent"]["max_context_tokens"],
            "agent.candidates": AGENT["candidates"],
            "sandbox": {**CONFIG["sandbox"], "workers": 2},
        }
    )

    def evaluate() -> dict[str, bytes]:
        eval_model_job(eval_job, settings, gpus=0, threads=1, config={"test": True})
        scores_job(
            f"{EVAL}/slots.parquet",
            "results/eval/plan.parquet",
            RUN,
            "holdout",
            f"{EVAL}/scores.json",
            {"test": True},
        )
        # the job's outputs; the journal under attempts/ is a log of what happened, not one
        return {k: v for k, v in output_bytes(Path(EVAL)).items() if k.split("/")[0] != "attempts"}

    first = evaluate()
    graded = [
        a
        for name, body in first.items()
        if name.startswith("toy__")
        for slot in json.loads(body)["slots"]
        for a in slot["attempts"]
        if a["outcome"] == "report"
    ]
    assert any(a["report"]["sandbox"] for a in graded)  # docker graded patches
    assert all("started" not in a and "seconds" not in a for a in graded)
    timings = json.loads(Path(volatile_sidecar(f"{EVAL}/slots.parquet")).read_text())
    assert {t["instance_id"] for t in timings["attempts"]} == {t.instance_id for t in toy_tasks(2)}
    assert all(t["started"] and t["seconds"] >= 0 for t in timings["attempts"])
    assert read_provenance(f"{EVAL}/scores.json")["inputs"]
    shutil.rmtree(EVAL)  # the journal too: every slot is generated and graded again
    assert_same_bytes(first, evaluate())


@pytest.fixture
def report_tree(tmp_path, monkeypatch):
    """The report tests' fake results tree and the job chain that builds its statistics,
    tables and figures (``tests/report/conftest.py``'s ``build_all``)."""
    import importlib.util

    here = Path(__file__).resolve().parent / "report"
    monkeypatch.syspath_prepend(str(here))
    spec = importlib.util.spec_from_file_location("report_jobs_chain", here / "conftest.py")
    chain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chain)
    fake = chain.write_fake_tree(tmp_path, chain.FakeSpec())
    return tmp_path, fake, chain.build_all


def test_rebuilt_tables_are_the_same_bytes_and_only_the_cost_table_reads_the_sidecars(
    report_tree,
):
    root, spec, build_all = report_tree
    build_all(root, spec)
    paper = root / "paper"
    first = output_bytes(paper)
    stats = output_bytes(root / "results" / "stats")
    assert {f"tables/{n}.tex" for n in ("costs", "numbers", "training_health")} <= set(first)
    shutil.rmtree(paper / "tables")
    shutil.rmtree(root / "results" / "stats")
    build_all(root, spec)
    assert_same_bytes(first, output_bytes(paper))
    assert_same_bytes(stats, output_bytes(root / "results" / "stats"))
    # a rerun of the segments measures other seconds: their sidecars change, nothing else
    for sidecar in sorted((root / "runs").glob("*/step_*/segment.volatile.json")):
        body = json.loads(sidecar.read_text())
        body["run_seconds"] = {k: v + 1.0 for k, v in body["run_seconds"].items()}
        sidecar.write_text(json.dumps(body))
    shutil.rmtree(paper / "tables")
    build_all(root, spec)
    again = output_bytes(paper)
    changed = sorted(name for name in first if first[name] != again[name])
    assert changed == ["tables/costs.tex"]
