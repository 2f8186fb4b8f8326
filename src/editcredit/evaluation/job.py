"""The jobs behind the rules of ``rules/eval.smk``: the plan, one model on one eval set, scores.

``eval_model_job`` resumes from the journal of its identity, runs the ledger to the end, then
writes every per-task slot file ``{task}.json``, ``slots.parquet`` and the predictions. The
slot files are written by this job beside its declared outputs; the journal and the
trajectories stay under ``attempts/{key}/`` across runs. The attempts' timestamps and wall
seconds, and this run's, go to the volatile sidecar of ``slots.parquet``
(``slots.volatile.json``), so evaluating again, even from an empty journal, writes the same
bytes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from editcredit.agent.environments import environment_factory
from editcredit.agent.rollout import RolloutConfig
from editcredit.data.freeze import load_tasks
from editcredit.data.task import Task
from editcredit.evaluation.journal import open_journal
from editcredit.evaluation.ledger import Limits
from editcredit.evaluation.plan import (
    RESERVED_NAMES,
    EvalSetSpec,
    ModelSpec,
    PlanError,
    PlanSlice,
    build_plan,
    read_slice,
    write_plan,
)
from editcredit.evaluation.predictions import write_predictions
from editcredit.evaluation.runner import SliceSettings, run_slots
from editcredit.evaluation.sandboxes import FaultySandbox, PassesCalls
from editcredit.evaluation.scoring import scores_record
from editcredit.evaluation.slots import (
    TaskSlots,
    slot_record,
    slots_rows,
    stored_task_slots,
    write_slots_parquet,
)
from editcredit.grading.grader_identity import study_report_store
from editcredit.grading.job_setup import graded_setup
from editcredit.io.atomic import atomic_write_text
from editcredit.io.provenance import provenance, write_result_json
from editcredit.io.volatile import is_volatile, write_volatile
from editcredit.job_settings import EvalModelSettings
from editcredit.layout import eval_job, eval_scope
from editcredit.protocol.budget import job_guard
from editcredit.sandbox.limits import GoldTimesBook
from editcredit.sandbox.memo import GradingMemo
from editcredit.settings import SandboxSettings
from editcredit.storage.monitor import Floor, StorageMonitor, existing_parent

#: Sandbox settings that change what a grading means (workers and docker mode do not).
SANDBOX_IDENTITY_KEYS = (
    "backend",
    "image",
    "timeout_factor",
    "mem_limit",
    "pids_limit",
    "test_limits",
)


def plan_job(
    tasks_paths: Sequence[str],
    models: Mapping[str, Mapping[str, Any]],
    evalsets: Mapping[str, Mapping[str, Any]],
    out_plan: str,
    out_summary: str,
    config: Any,
    training_pool: str | None = None,
) -> dict[str, Any]:
    """Build and write the plan; ``tasks_paths`` are ``data/frozen/{suite}/tasks.parquet``,
    ``training_pool`` the pool file (results/training/pool.json) when a set takes its tasks."""
    tasks_by_suite = {Path(p).parent.name: load_tasks(p) for p in tasks_paths}
    specs = [EvalSetSpec.from_mapping(name, cfg) for name, cfg in evalsets.items()]
    if any(s.with_training_pool for s in specs) and not training_pool:
        raise PlanError("an eval set takes the training pool's tasks: no pool file was given")
    pool = json.loads(Path(training_pool).read_text())["pool"] if training_pool else []
    rows = build_plan(
        [ModelSpec.from_mapping(n, c) for n, c in models.items()], specs, tasks_by_suite, pool
    )
    inputs = list(tasks_paths) + ([training_pool] if training_pool else [])
    block = provenance(inputs, config)
    summary = write_plan(rows, out_plan, Path(out_plan).parent / "plans", block)
    summary["models"] = {n: dict(c) for n, c in models.items()}
    summary["evalsets"] = {n: dict(c) for n, c in evalsets.items()}
    write_result_json(out_summary, summary, inputs, config)
    print(json.dumps({k: summary[k] for k in ("plan_sha256", "version", "slots")}))
    return summary


class LazySandbox(PassesCalls):
    """Starts the sandbox pool on the first grading (a rerun with nothing to grade starts
    none; a model with only empty patches never needs one)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory, self._box, self._lock = factory, None, threading.Lock()

    def _run(self, call, task: Task, patch: str, select: list[str] | None):
        with self._lock:
            if self._box is None:
                self._box = self._factory()
        return call(self._box, task, patch, select)

    def close(self) -> None:
        if self._box is not None and hasattr(self._box, "close"):
            self._box.close()
        self._box = None

    def counts(self) -> dict[str, int] | None:
        """The memo's counts of the started pool (None: none started, or no memo)."""
        counts = getattr(self._box, "counts", None)
        return counts() if counts is not None else None


def _tasks_of(plan: PlanSlice, tasks_path: str) -> dict[str, Task]:
    tasks = {t.instance_id: t for t in load_tasks(tasks_path)}
    out = {}
    for row in plan.rows:
        task = tasks.get(row["instance_id"])
        if task is None or task.sha256() != row["task_sha256"]:
            raise PlanError(
                f"{tasks_path}: task {row['instance_id']} is missing or differs from the plan"
            )
        out[task.instance_id] = task
    return out


def journal_identity(
    plan: PlanSlice, model_sha256: str, settings: EvalModelSettings, grader: Mapping[str, Any]
) -> dict[str, Any]:
    """What an attempt of this slice means; ``grader`` is the grader's identity."""
    ev, sandbox = settings.evaluation, settings.sandbox.to_dict()
    return {
        "model": plan.model,
        "evalset": plan.evalset,
        "slice_sha256": plan.sha256,
        "model_sha256": model_sha256,
        "agent": settings.agent.to_dict(),
        "grading": settings.grading.to_dict(),
        "sandbox": {k: sandbox.get(k) for k in SANDBOX_IDENTITY_KEYS},
        "limits": ev.limits.to_dict(),
        "seed": int(ev.seed),
        "faults": ev.faults.to_dict() if float(ev.faults.rate) > 0 else None,
        "grader": dict(grader),
        "generation": settings.generation.to_dict(),
    }


@dataclass(frozen=True)
class EvalModelJob:
    """The files of one eval_model job (rule eval_model's wildcards, inputs and outputs)."""

    model: str
    evalset: str
    plan: str  # results/eval/plan.parquet
    model_dir: str  # the HF directory evaluated
    tasks: str  # data/frozen/{suite}/tasks.parquet
    slots: str  # results/eval/{model}/{evalset}/slots.parquet
    predictions: str  # results/eval/{model}/{evalset}/predictions/
    # results/controls/{suite}/tasks: the gold times the control rule recorded (None: every
    # task's times measured by the sandbox, one gold run each)
    gold_times: str | None = None


def eval_model_job(
    job: EvalModelJob,
    settings: EvalModelSettings,
    *,
    gpus: int,
    threads: int,
    config: Any,
    make_sandbox: Callable[[], Any] | None = None,
    load_policy_fn: Callable[[], tuple[Any, Any]] | None = None,
    storage: Mapping[str, Any] | None = None,
    budget: Mapping[str, Any] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Evaluate ``job.model`` on ``job.evalset`` as planned; write every slot file and the
    tables. ``settings`` is what the job reads of the config (rule eval_model's params);
    ``models`` the configured models, whose ``receipt_sha256`` pins a base model evaluated;
    ``config`` is hashed into the provenance block, never read.

    ``storage`` is the floor of config ``training.health`` (``min_free_disk_gb``,
    ``min_free_inodes``): the free disk and inodes of the output's file system are read before
    each round and each generation batch, and below it the job stops with a receipt under
    ``logs/storage/eval_model/{model}/{evalset}/`` before writing any declared output (the
    journal keeps the attempts made, for the next run).

    ``budget`` (config ``budgets.evaluation``) caps this (model, eval set): its generation
    batches, tokens, gradings, GPU hours and wall time, earlier attempts of its journal
    included; a cap the next batch or grading would cross stops the job with a receipt under
    ``logs/budgets/`` before any slot file or table is written. The spend is in the summary
    (``budget``) appended to the journal's ``runs.jsonl``.

    ``make_sandbox`` and ``load_policy_fn`` replace the sandbox pool and the model loader
    (tests plant fakes there); the pool's per-test limits come from the gold times the control
    rule recorded in ``job.gold_times``. The journal is the one of the slice's identity, which names
    the configured sandbox's grader (its image, code and versions; ``on_grader_change``
    decides what a journal of another grader means).
    """
    model, evalset, model_dir = job.model, job.evalset, job.model_dir
    # the set-up every graded job shares: a base checked against its receipt (and the config's
    # pin) before anything reads it, the recorded gold times read
    setup = graded_setup(str(model_dir), models, job.gold_times)
    plan = read_slice(job.plan, model, evalset)
    if Path(plan.first("model_dir")) != Path(model_dir):
        raise PlanError(f"{job.plan}: {model} is planned from {plan.first('model_dir')}")
    tasks = _tasks_of(plan, job.tasks)
    book, known = setup.gold_times, setup.known_inputs() or None
    # not the gold-times directory: its records hold wall-clock seconds, which would make
    # every downstream byte depend on the clock (they only set the tests' time limits)
    inputs = [job.plan, job.tasks, model_dir]
    block = provenance(inputs, config, known)
    sandbox_cfg, agent_cfg = settings.sandbox.to_dict(), settings.agent.to_dict()
    grader = setup.grader(sandbox_cfg)
    identity = journal_identity(plan, block["inputs"][str(model_dir)], settings, grader)
    out_dir = Path(job.slots).parent
    ev = settings.evaluation
    journal = open_journal(out_dir / "attempts", identity, ev.on_grader_change)
    key_dir = journal.dir
    limits = Limits(**ev.limits.to_dict())
    slice_settings = SliceSettings(
        model=model,
        evalset=evalset,
        rollout=RolloutConfig.from_agent(agent_cfg),
        environment=environment_factory(agent_cfg, sandbox_cfg),
        f_weight=float(settings.grading.f_weight),
        g_weight=float(settings.grading.g_weight),
        limits=limits,
        seed=int(ev.seed),
        batch_size=int(ev.batch_size),
        workers=settings.sandbox.eval_workers,  # grading threads: one per sandbox
    )
    sandbox = LazySandbox(make_sandbox or _pool_factory(settings.sandbox, book, grader))
    faults = ev.faults
    graded = (
        FaultySandbox(sandbox, float(faults.rate), int(faults.seed), faults.mode)
        if float(faults.rate) > 0
        else sandbox
    )
    generation = settings.generation.to_dict()
    loader = load_policy_fn or _policy_loader(model_dir, gpus, threads, generation)
    monitor = (
        StorageMonitor(
            existing_parent(out_dir), Floor.from_health(storage), eval_job(model, evalset)
        )
        if storage is not None
        else None
    )
    guard = job_guard(
        eval_scope(model, evalset), budget, "config budgets.evaluation", gpus=int(gpus)
    )
    try:
        history, stats = run_slots(
            plan.slots,
            tasks,
            slice_settings,
            journal,
            graded,
            loader,
            key_dir / "trajectories",
            before_batch=monitor.check if monitor else None,
            budget=guard,
        )
    finally:
        gradings = sandbox.counts()
        sandbox.close()
    files = render(plan, history, limits, identity, journal.path.as_posix())
    timings = write_outputs(files, plan, block, out_dir, job.slots, job.predictions)
    write_volatile(job.slots, {"attempts": timings, "run": stats.to_dict(), "gradings": gradings})
    print(json.dumps({"gradings": gradings}))
    summary: dict[str, Any] = {
        "model": model,
        "evalset": evalset,
        "journal": journal.path.as_posix(),
    }
    summary["grader"] = dict(grader)
    if setup.base_check is not None:
        summary["base_check"] = setup.base_check
    summary.update(stats.to_dict())
    summary["budget"] = guard.ledger()
    if isinstance(graded, FaultySandbox):
        summary["faults"] = {"injected": graded.injected, "passed": graded.passed}
    _append_run_log(key_dir / "runs.jsonl", summary)
    print(json.dumps(summary, sort_keys=True))
    return summary


def render(
    plan: PlanSlice, history, limits: Limits, identity: Mapping[str, Any], journal: str
) -> list[TaskSlots]:
    """One TaskSlots per planned task, in plan order; every slot final."""
    samples: dict[str, list[int]] = {}
    for instance_id, sample in plan.slots:
        samples.setdefault(instance_id, []).append(sample)
    rows = {r["instance_id"]: r for r in plan.rows}
    files = []
    for instance_id, indices in samples.items():
        row = rows[instance_id]
        slots = [
            slot_record(
                k, history[(instance_id, k)], limits, f"{journal}: {instance_id} sample {k}"
            )
            for k in indices
        ]
        files.append(
            TaskSlots(
                model=plan.model,
                evalset=plan.evalset,
                instance_id=instance_id,
                task_sha256=row["task_sha256"],
                suite=row["suite"],
                run=row["run"],
                step=row["step"],
                diagnostic=row["diagnostic"],
                plan_sha256=plan.plan_sha256,
                plan_version=plan.plan_version,
                slice_sha256=plan.sha256,
                model_sha256=identity["model_sha256"],
                journal=journal,
                limits=dict(identity["limits"]),
                slots=slots,
            )
        )
    return files


def write_outputs(
    files: Sequence[TaskSlots],
    plan: PlanSlice,
    block: Mapping[str, Any],
    out_dir: Path,
    out_slots: str,
    out_predictions: str,
) -> list[dict[str, Any]]:
    """Per-task slot files (with the provenance block), slots.parquet, predictions; slot
    files of tasks no longer planned are removed (their attempts stay in their journal).
    Returns the attempts' volatile facts (``slots.stored_attempt``), for the sidecar."""
    keep, timings = set(), []
    for f in files:
        stored, volatile = stored_task_slots(f)
        body = {**stored, "provenance": dict(block)}
        path = out_dir / f"{f.instance_id}.json"
        atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
        keep.add(path.name)
        timings += volatile
    for stale in out_dir.glob("*.json"):
        if stale.name not in keep and stale.stem not in RESERVED_NAMES and not is_volatile(stale):
            stale.unlink()
    write_slots_parquet(slots_rows(plan.model, plan.evalset, files), out_slots, block)
    write_predictions(files, plan.model, plan.samples, out_predictions)
    return timings


def _append_run_log(path: Path, summary: Mapping[str, Any]) -> None:
    line = json.dumps({"finished": datetime.now(UTC).isoformat(), **summary}, sort_keys=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _pool_factory(
    sandbox: SandboxSettings,
    gold_times: GoldTimesBook | None = None,
    grader: Mapping[str, Any] | None = None,
) -> Callable[[], Any]:
    """The job's sandbox pool of ``sandbox.eval_workers`` sandboxes (outcomes are the same at
    any count), its gradings limited by ``gold_times`` (the recorded gold times; a task
    without them is measured with one gold run), behind the memo and the study's report store
    (``grader``: the job's grader identity, for the store's key)."""

    def make():
        from editcredit.sandbox.pool import SandboxPool

        sandbox_cfg = sandbox.to_dict()
        pool = SandboxPool(sandbox.backend, sandbox_cfg, sandbox.eval_workers, gold_times)
        store = study_report_store(sandbox_cfg, grader)
        return GradingMemo(pool, store=store)  # each distinct tree graded once per study

    return make


def _policy_loader(
    model_dir: str, gpus: int, threads: int, generation: Mapping[str, Any] | None
) -> Callable[[], tuple[Any, Any]]:
    def load():
        import torch

        from editcredit.policy.devices import bind_gpus
        from editcredit.policy.generator_factory import load_generator

        torch.set_num_threads(max(1, int(threads)))
        device = bind_gpus(int(gpus))
        print(f"loading {model_dir} on {device}")
        return load_generator(model_dir, device, generation)

    return load


def scores_job(
    slots_path: str, plan_path: str, model: str, evalset: str, out_scores: str, config: Any
) -> dict[str, Any]:
    record = scores_record(slots_path, plan_path, model, evalset)
    write_result_json(out_scores, record, [slots_path, plan_path], config)
    keys = ("model", "evalset", "score", "bounds", "unresolved_by_reason")
    print(json.dumps({k: record[k] for k in keys}))
    return record
