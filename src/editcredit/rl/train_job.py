"""The train_segment job: config in, one segment directory with receipts out.

Every receipt names the grader that graded its rollouts (``grader``:
:func:`editcredit.grading.grader_identity.grader_identity`, read when the job starts).

What the clock, the disk or the cluster decides (wall seconds, the budget's time spent, free
bytes, worker addresses) goes to the receipt's volatile sidecar (``editcredit.io.volatile``),
so that a rebuilt segment or control replay writes the same bytes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

from editcredit.grading.job_setup import GradedSetup, graded_setup
from editcredit.io.atomic import atomic_write_text
from editcredit.io.identity import write_identity
from editcredit.io.provenance import write_result_json
from editcredit.io.volatile import read_volatile, volatile_sidecar, write_volatile
from editcredit.job_settings import ControlReplaySettings, SegmentSettings
from editcredit.layout import control_run_name, parse_run, train_job
from editcredit.policy.base_job import training_tasks
from editcredit.policy.devices import bind_gpus
from editcredit.protocol.budget import Budget, BudgetGuard, job_guard, split_ledger
from editcredit.records import Arm
from editcredit.rl.config import TrainConfig
from editcredit.rl.control import replay_control
from editcredit.rl.cursor import pool_of_size
from editcredit.rl.gates import UpdateGateFailed
from editcredit.rl.pool import read_pool
from editcredit.rl.records import (
    ROLLOUT_SCHEMA,
    ControlReceipt,
    SegmentReceipt,
    SegmentStorage,
    StableWorkers,
    StorageCheck,
    write_table,
)
from editcredit.rl.segment import SegmentSpec, train_segment
from editcredit.rl.step_callbacks import segment_callbacks
from editcredit.rl.timing import PHASES
from editcredit.rl.workers import WorkersDescription, make_workers
from editcredit.sandbox.report_store import absolute_store
from editcredit.settings import RaySettings
from editcredit.storage.forecast import checkpoint_bytes
from editcredit.storage.monitor import Floor, StorageMonitor, existing_parent


class GateFailed(RuntimeError):
    """The first-segment gate stopped the run (METHOD §5)."""


def _gate_receipt(gate_dir: str, run: str, record: Mapping[str, Any]) -> Path:
    """A failed gate's receipt, never overwritten: a new try gets a new name (METHOD §11).
    ``record`` is an early update's :class:`~editcredit.rl.gates.UpdateGateFailure`, or the
    first segment's receipt with its volatile facts."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = Path(gate_dir) / f"{run}-{stamp}-{os.getpid()}.json"
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return path


def expected_checkpoint_bytes(model_dir: str) -> int:
    """Model weights plus AdamW's two moments, as float32: 3 x 4 bytes per parameter."""
    from editcredit.io.safetensors_reader import Checkpoint

    n = sum(int(t.numel) for t in Checkpoint(Path(model_dir)).tensors.values())
    return checkpoint_bytes(n)


def segment_monitor(out_dir: str, health: dict[str, Any], run: str, step: int) -> StorageMonitor:
    """The storage monitor of a segment: the file system of ``out_dir`` against the floor of
    ``training.health`` (METHOD §5)."""
    return StorageMonitor(existing_parent(out_dir), Floor.from_health(health), train_job(run, step))


def check_storage(monitor: StorageMonitor, start_model: str) -> StorageCheck:
    """Free disk and inodes before training; stop cleanly with a receipt when the segment's
    checkpoint would not fit (:class:`StorageLow`)."""
    need = expected_checkpoint_bytes(start_model)
    state = monitor.check("before training", need_bytes=need)
    return {
        "free_bytes": state.free_bytes,
        "expected_checkpoint_bytes": need,
        "min_free_gb": monitor.floor.min_free_bytes / 1e9,
    }


def run_budget_guard(
    run: str,
    budget: Mapping[str, Any] | None,
    start_state: str | None,
    gpus: int,
    receipt_dir: str,
) -> BudgetGuard:
    """The run's budget (config ``budgets.run``) with what its earlier segments spent (their
    ``segment.json`` ledgers, and the time spent from its volatile sidecar): the caps hold for
    the whole run, not per segment."""
    spent, failed = {}, 0
    if start_state:
        receipt = Path(start_state) / "segment.json"
        earlier = json.loads(receipt.read_text()).get("budget")
        if earlier:
            timed = read_volatile(receipt).get("budget_spent", {})
            spent, failed = {**earlier["spent"], **timed}, int(earlier["infra_failures"])
    caps = Budget.from_mapping(budget, where="config budgets.run")
    return BudgetGuard(run, caps, spent, failed, receipt_dir=receipt_dir, gpus=gpus)


def stable_workers(described: WorkersDescription) -> StableWorkers:
    """What a receipt keeps of where the rollout workers ran: their kind and number. Addresses,
    Ray node ids and which actor took which groups change from run to run (the sidecar's)."""
    out: StableWorkers = {"kind": described["kind"]}
    if "workers" in described:
        out["workers"] = described["workers"]
    if "actor_nodes" in described:
        out["workers"] = len(described["actor_nodes"])
    return out


def earlier_run_seconds(start_state: str | None) -> dict[str, float]:
    """The phase seconds of the run's earlier segments (the previous sidecar's
    ``run_seconds``; nothing at the run's first segment), read before training starts."""
    if not start_state:
        return dict.fromkeys(PHASES, 0.0)
    receipt = Path(start_state) / "segment.json"
    earlier = read_volatile(receipt).get("run_seconds")
    if not isinstance(earlier, dict) or not all(k in earlier for k in PHASES):
        raise ValueError(f"{volatile_sidecar(receipt)}: no run_seconds {list(PHASES)}")
    return {k: float(earlier[k]) for k in PHASES}


def run_seconds(earlier: dict[str, float], steps: list[dict[str, float]]) -> dict[str, float]:
    """The run's phase seconds so far: its earlier segments' plus this segment's steps."""
    return {k: earlier[k] + sum(s[k] for s in steps) for k in PHASES}


def train_config(
    training: Mapping[str, Any], agent: Mapping[str, Any], arm: str, seed: int
) -> TrainConfig:
    """The run's config: ``training.grpo`` plus the agent's temperature, the arm and the seed."""
    return run_config(training["grpo"], agent["temperature"], arm, seed)


def run_config(grpo: Mapping[str, Any], temperature: float, arm: str, seed: int) -> TrainConfig:
    """``train_config`` from the GRPO settings and the agent's temperature."""
    return TrainConfig.from_dict({**grpo, "temperature": temperature, "arm": arm, "seed": seed})


def job_device(gpus: int, threads: int) -> torch.device:
    """Bind the job's GPUs (or the CPU), its torch threads, and determinism on CPU."""
    device = bind_gpus(int(gpus))
    torch.set_num_threads(max(1, threads))
    torch.use_deterministic_algorithms(device.type == "cpu")
    return device


def rollout_worker_kwargs(
    model_dir: str,
    settings: SegmentSettings | ControlReplaySettings,
    device,
    gold_times: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The settings every rollout worker of a job is built from (plain mappings: a worker may
    be a Ray actor); ``gold_times`` the recorded gold times of the pool's tasks, in plain form
    (:meth:`editcredit.sandbox.limits.GoldTimesBook.timings`)."""
    return {
        "model_dir": model_dir,
        "agent_cfg": settings.agent.to_dict(),
        "reward_cfg": settings.reward.to_dict(),
        "grading_cfg": settings.grading.to_dict(),
        "sandbox_cfg": absolute_store(settings.sandbox.to_dict()),
        "threads": 1,
        "device": str(device),
        "generation": settings.generation.to_dict(),
        "gold_times": dict(gold_times or {}),
    }


@dataclass(frozen=True)
class SegmentJob:
    """The files of one train_segment job (rule train_segment's wildcards, inputs, output)."""

    run: str  # {arm}-s{seed}
    step: int  # the segment's last step
    previous: str  # the previous segment's directory, or the base model's at the first
    tasks: str  # data/frozen/{suite}/tasks.parquet
    controls: str | None  # results/controls/{suite}/summary.json
    out_dir: str  # runs/{run}/step_{step}
    gold_times: str | None = None  # results/controls/{suite}/tasks (the gold runs' times)
    pool: str | None = None  # results/training/pool.json (None: the first pool_size tasks)


def pool_tasks(tasks: list, size: int, pool_file: str | None = None) -> list:
    """The tasks of the training pool: those the pool file (rule training_pool) lists, or
    without one the first ``size`` (``training.pool_size``, :func:`pool_of_size`)."""
    if pool_file:
        return read_pool(pool_file, tasks, size)
    chosen = set(pool_of_size([t.instance_id for t in tasks], int(size)))
    return [t for t in tasks if t.instance_id in chosen]


@dataclass(frozen=True)
class RolloutSetup:
    """What a job that plays the training pool with rollout workers sets up before it plays
    (train_segment and control_replay alike): the base's check against its receipt and pin,
    the bound device, the quarantine, the pool and the workers' settings (the pool's recorded
    gold times among them)."""

    graded: GradedSetup
    device: torch.device
    quarantine: dict[str, str]
    pool: list
    # RolloutWorker's keyword arguments (its settings' sections, the pool's gold times), passed
    # to each worker whole
    worker_kwargs: dict[str, Any]

    def start_workers(self, ray: RaySettings) -> tuple[dict[str, Any], Any]:
        """The grader's identity (read when the job starts) and the rollout workers."""
        grader = self.graded.grader(self.worker_kwargs["sandbox_cfg"])
        return grader, make_workers(ray, self.worker_kwargs)

    def record(self, receipt: dict[str, Any], pool_size: int) -> dict[str, str]:
        """Add the quarantine, the pool and the base check to ``receipt``; return the input
        hashes the check already computed (for the provenance block)."""
        if self.quarantine:
            receipt["quarantined"] = self.quarantine
        if pool_size:
            receipt["pool"] = sorted(t.instance_id for t in self.pool)
        if self.graded.base_check is not None:
            receipt["base_check"] = self.graded.base_check
        return self.graded.known_inputs()


def rollout_setup(
    model_dir: str,
    files: SegmentJob | ControlReplayJob,
    settings: SegmentSettings | ControlReplaySettings,
    *,
    gpus: int,
    threads: int,
    models: Mapping[str, Mapping[str, Any]] | None,
    check_base: bool = True,
) -> RolloutSetup:
    """The set-up every graded job shares (:func:`editcredit.grading.job_setup.graded_setup`: a
    base, ``check_base``, checked against its receipt and the pin of ``models`` before anything
    reads it, the recorded gold times read); then the job's device is bound and its pool chosen
    from the eligible tasks (``files.pool``, or the first ``pool_size``), the workers given the
    pool's gold times."""
    graded = graded_setup(model_dir, models, files.gold_times, check_base=check_base)
    device = job_device(gpus, threads)
    quarantine = dict(settings.quarantine or {})
    eligible = training_tasks(files.tasks, files.controls, quarantine)
    pool = pool_tasks(eligible, settings.pool_size, files.pool)
    gold = graded.gold_times.timings(t.instance_id for t in pool)
    kwargs = rollout_worker_kwargs(model_dir, settings, device, gold)
    return RolloutSetup(graded, device, quarantine, pool, kwargs)


def train_segment_job(
    job: SegmentJob,
    settings: SegmentSettings,
    *,
    gpus: int,
    threads: int,
    config: Mapping[str, Any],
    budget: Mapping[str, Any] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    gate_dir: str = "logs/gates",
    budget_dir: str = "logs/budgets",
) -> SegmentReceipt:
    """Rule train_segment: k GRPO steps of ``job.run`` from ``job.previous``. ``settings`` is
    what the job reads of the config (the rule's params); ``budget`` is config ``budgets.run``
    (read at job start, not a param: a changed cap does not rerun finished segments);
    ``models`` the configured models, whose ``receipt_sha256`` pins a base (the first segment's
    start is checked against it); ``config`` is hashed into the provenance block and recorded
    in the identity receipt, never read."""
    run, step, previous, out_dir = job.run, job.step, job.previous, job.out_dir
    tasks_path, controls_path = job.tasks, job.controls
    name = parse_run(run)
    cfg = run_config(settings.grpo, settings.agent.temperature, name.arm, name.seed)
    k = int(settings.segment_steps)
    # the previous segment's directory, or the base model's at step 0
    start_state = previous if step > k else None
    start_model = str(Path(previous) / "model") if start_state else previous
    # a base is checked against its receipt (and the config's pin) before anything reads it
    setup = rollout_setup(
        start_model,
        job,
        settings,
        gpus=gpus,
        threads=threads,
        models=models,
        check_base=not start_state,
    )
    device, pool = setup.device, setup.pool
    spec = SegmentSpec(
        run=run,
        start_step=step - k,
        steps=k,
        start_model=Path(start_model),
        start_state=Path(start_state) / "state" if start_state else None,
        out_dir=Path(out_dir),
    )
    print(f"{run}: steps {step - k + 1}..{step} on {device}, {len(pool)} training tasks")
    monitor = segment_monitor(out_dir, settings.health.to_dict(), run, step)
    storage = check_storage(monitor, start_model)
    guard = run_budget_guard(run, budget, start_state, gpus, budget_dir)
    earlier_seconds = earlier_run_seconds(start_state)
    grader, workers = setup.start_workers(settings.ray)
    try:
        receipt = train_segment(
            spec,
            cfg,
            pool,
            workers,
            settings.health,
            device,
            callbacks=segment_callbacks(
                spec, cfg, budget=guard, storage=(monitor, storage["expected_checkpoint_bytes"])
            ),
        )
        volatile = receipt.pop("volatile")
        volatile["workers"] = workers.describe()
        receipt["workers"] = stable_workers(volatile["workers"])
    except UpdateGateFailed as failed:
        path = _gate_receipt(gate_dir, run, failed.record)
        raise GateFailed(f"{failed}; receipt {path}") from failed
    finally:
        workers.close()
    receipt["grader"] = grader
    # the check less its free bytes (a test's fake check may hold fewer keys)
    receipt["storage"] = cast(
        SegmentStorage, {k: v for k, v in storage.items() if k != "free_bytes"}
    )
    volatile["storage"] = {"free_bytes": storage["free_bytes"]}
    volatile["run_seconds"] = run_seconds(earlier_seconds, volatile["steps"])
    # the keys record adds (quarantined, pool, base_check) are SegmentReceipt's
    known = setup.record(cast(dict[str, Any], receipt), settings.pool_size)
    gate = receipt.get("first_segment_gate")
    if gate is not None and not gate["passed"]:
        gate_receipt = _gate_receipt(gate_dir, run, {**receipt, "volatile": volatile})
        raise GateFailed(
            f"{run}: first-segment gate failed {gate['checks']}; receipt {gate_receipt}"
        )
    inputs = [start_model, tasks_path] + ([start_state] if start_state else [])
    inputs += [controls_path] if controls_path else []
    inputs += [job.pool] if job.pool else []
    # not the gold-times directory: its records hold wall-clock seconds, which would make
    # every downstream byte depend on the clock (they only set the tests' time limits)
    write_result_json(Path(out_dir) / "segment.json", receipt, inputs, config, known)
    write_volatile(Path(out_dir) / "segment.json", volatile)
    write_identity(Path(out_dir), config=config)
    return receipt


@dataclass(frozen=True)
class ControlReplayJob:
    """The files of one control_replay job (rule control_replay's wildcard, inputs, output)."""

    seed: int
    base_model: str  # the base model's HF directory
    tasks: str  # data/frozen/{suite}/tasks.parquet
    controls: str | None  # results/controls/{suite}/summary.json
    out: str  # results/training/control/s{seed}.parquet (its receipt beside it)
    gold_times: str | None = None  # results/controls/{suite}/tasks (the gold runs' times)
    pool: str | None = None  # results/training/pool.json (None: the first pool_size tasks)


def control_replay_job(
    job: ControlReplayJob,
    settings: ControlReplaySettings,
    *,
    gpus: int,
    threads: int,
    config: Mapping[str, Any],
    budget: Mapping[str, Any] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
) -> ControlReceipt:
    """Rule control_replay: the base policy on seed ``job.seed``'s draws of steps 1..endpoint
    (``rl.control``); writes the rollouts (``job.out``), a receipt beside them, and the
    receipt's volatile sidecar (wall seconds, where the workers ran, the budget's time spent).
    The control is a run: ``budget`` (config ``budgets.run``, read at job start, not a param)
    caps it as it caps a training run, checked before each replayed step; a cap crossed stops
    it with a receipt under ``logs/budgets/`` and no rollouts. Its spend is in the receipt
    (``budget``). ``models`` and ``config`` as for :func:`train_segment_job`."""
    seed, base_model, out = int(job.seed), job.base_model, job.out
    tasks_path, controls_path = job.tasks, job.controls
    cfg = run_config(settings.grpo, settings.agent.temperature, Arm.O.value, seed)
    steps = int(settings.endpoint_step)
    setup = rollout_setup(base_model, job, settings, gpus=gpus, threads=threads, models=models)
    device, pool = setup.device, setup.pool
    run = control_run_name(int(seed))
    print(f"{run}: the base policy on steps 1..{steps} on {device}, {len(pool)} training tasks")
    started = time.monotonic()
    guard = job_guard(run, budget, "config budgets.run", gpus=int(gpus))
    grader, workers = setup.start_workers(settings.ray)
    try:
        rows = replay_control(cfg, steps, pool, workers, budget=guard)
        where = workers.describe()
    finally:
        workers.close()
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.tmp")
    write_table(rows, ROLLOUT_SCHEMA, tmp)
    tmp.replace(out_path)
    ledger, timed = split_ledger(guard.ledger())
    receipt: ControlReceipt = {
        "run": run,
        "seed": int(seed),
        "steps": steps,
        "rollouts": len(rows),
        "base_model": base_model,
        "device": str(device),
        "workers": stable_workers(where),
        "grader": grader,
        "budget": ledger,
    }
    known = setup.record(cast(dict[str, Any], receipt), settings.pool_size)
    inputs = [base_model, tasks_path] + ([controls_path] if controls_path else [])
    inputs += [job.pool] if job.pool else []
    # not the gold-times directory: its records hold wall-clock seconds, which would make
    # every downstream byte depend on the clock (they only set the tests' time limits)
    seconds = time.monotonic() - started
    write_result_json(out_path.with_suffix(".json"), receipt, inputs, config, known)
    volatile = {"seconds": seconds, "workers": where, "budget_spent": timed}
    write_volatile(out_path.with_suffix(".json"), volatile)
    return receipt
