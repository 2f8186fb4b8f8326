"""One training segment: k GRPO steps from a checkpoint to the next (METHOD §3-§5).

Each step draws its tasks from the data cursor, plays every task's group through the workers
(rollouts, final grading, counterfactual grading for the arms that query), assembles advantages
with the arm's credit, and takes one optimiser step. The segment's directory holds the model,
the optimiser/RNG/cursor state, and the step records (rollouts, credit ledger, the known truth of
the rollouts' edit blocks, metrics).

What the clock decides (the phases' seconds, the segment's wall time, the budget's time spent)
stays out of those records and of the receipt: the receipt's ``volatile`` part goes to the
segment's volatile sidecar (``editcredit.io.volatile``), so a rebuilt segment writes the same
bytes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from editcredit.data.block_truth import TRUTH_SCHEMA
from editcredit.data.task import Task
from editcredit.policy.model import enable_activation_checkpointing
from editcredit.progress import Progress
from editcredit.protocol.budget import BudgetGuard, split_ledger
from editcredit.records import CreditReason
from editcredit.rl.advantages import weigh_negative
from editcredit.rl.checkpoint import load_state, save_segment, seed_rng
from editcredit.rl.config import TrainConfig
from editcredit.rl.credit import queries_cf, reads_truth
from editcredit.rl.cursor import DataCursor
from editcredit.rl.gates import UpdateCheck, first_segment_gate, update_gate
from editcredit.rl.health import HealthMonitor
from editcredit.rl.records import (
    CREDIT_SCHEMA,
    METRICS_SCHEMA,
    ROLLOUT_SCHEMA,
    CfQuery,
    CreditLedgerRow,
    MetricsRow,
    RolloutRow,
    SegmentReceipt,
    TruthRow,
    write_table,
)
from editcredit.rl.rollout_worker import GroupJob, group_seed
from editcredit.rl.step_batch import assemble_step
from editcredit.rl.step_callbacks import StepCallback, StepState, budget_of, updates_of
from editcredit.rl.timing import segment_volatile, step_seconds
from editcredit.rl.update import UpdateSequence, step_update
from editcredit.rl.workers import WorkerPool
from editcredit.settings import HealthSettings


@dataclass(frozen=True)
class SegmentSpec:
    """Where a segment starts and ends."""

    run: str
    start_step: int
    steps: int
    start_model: Path
    start_state: Path | None  # None at step 0 (the base model)
    out_dir: Path


def _rate(rows: list[RolloutRow], pred) -> float:
    return sum(1 for r in rows if pred(r)) / len(rows) if rows else math.nan


def _masked_by_cause(rows: list[RolloutRow]) -> dict[str, int]:
    """Masked rollouts of a step counted by cause (a health metric per arm, METHOD §5)."""
    causes = [r.get("mask_cause") or "unknown" for r in rows if r["masked"]]
    return {c: causes.count(c) for c in sorted(set(causes))}


def step_metrics(run, step, rows, credit, update, alerts, parameters) -> MetricsRow:
    """One row of metrics.parquet (no wall times: :func:`step_seconds` measures those).
    ``update_model_flops`` counts 6 x parameters x the tokens through the update (forward and
    backward), the usual numerator of model FLOPs utilisation."""
    live = [r for r in rows if not r["masked"]]
    return {
        "run": run,
        "step": step,
        "reward_mean": float(np.mean([r["reward"] for r in live])) if live else math.nan,
        "pass_rate": float(np.mean([r["Y"] for r in live])) if live else math.nan,
        "entropy": update["entropy"],
        "grad_norm": update["grad_norm"],
        "loss": update["loss"],
        "micro_batches": update["micro_batches"],
        "optimizer_steps": update["optimizer_steps"],
        "loss_masked_share": update["tv_masked_fraction"],
        "rollouts": len(rows),
        "masked_share": _rate(rows, lambda r: r["masked"]),
        "masked_by_cause": json.dumps(_masked_by_cause(rows), sort_keys=True),
        "format_error_rate": _rate(rows, lambda r: r["format_error"] == 1),
        "p2p_regression_rate": _rate(live, lambda r: r["p2p_regression"] == 1),
        "context_budget_rate": _rate(rows, lambda r: r["end_reason"] == "context_budget"),
        "generated_tokens": int(sum(sum(r["loss_mask"]) for r in rows)),
        "cf_sent": credit.metrics["cf_sent"],
        "cf_available": credit.metrics["cf_available"],
        "cf_nonzero": credit.metrics["cf_nonzero"],
        "credit_mass_l1": credit.metrics["credit_mass_l1"],
        "credit_mass_signed": credit.metrics["credit_mass_signed"],
        "credit_rollouts": credit.metrics["credit_rollouts"],
        "update_tokens": int(update["tokens"]),
        "update_model_flops": 6.0 * parameters * update["tokens"],
        "alerts": json.dumps(alerts),
    }


def play_step(
    run: str,
    step: int,
    cursor: DataCursor,
    by_id: dict[str, Task],
    cfg: TrainConfig,
    workers: WorkerPool,
) -> tuple[list[RolloutRow], list[CfQuery], dict[str, float], DataCursor]:
    """Draw one step's tasks from the cursor and play their groups with the workers' current
    weights: (rollout rows, query records, phase seconds, the advanced cursor). The draws and
    sampling seeds depend on the run's seed and the step only, so every arm of a seed, and the
    no-learning control, meet the same tasks with the same random numbers."""
    ids, cursor = cursor.take(sorted(by_id), cfg.tasks_per_step)
    jobs = [
        GroupJob(
            run,
            step,
            by_id[i],
            cfg.group_size,
            group_seed(cfg.seed, step, i),
            queries_cf(cfg.arm),
            cfg.query_rate,
            reads_truth(cfg.arm),
        )
        for i in ids
    ]
    results = workers.run_groups(jobs)
    rows = [r for res in results for r in res["rows"]]
    queries = [q for res in results for q in res["queries"]]
    seconds = {
        k: max(res["seconds"][k] for res in results)
        for k in ("rollout", "grading", "counterfactual")
    }
    return rows, queries, seconds, cursor


@dataclass
class Trainer:
    """What a segment trains and carries from step to step: the model and its optimiser, the
    data cursor, the health monitor, and the parameters it started from."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    cursor: DataCursor
    monitor: HealthMonitor
    initial: dict[str, torch.Tensor]
    parameters: int

    def changed_tensors(self) -> int:
        """How many parameter tensors differ from the segment's start."""
        return self.moved_since(self.initial)

    def snapshot(self) -> dict[str, torch.Tensor]:
        """A copy of the parameters in CPU memory (the device keeps no second copy)."""
        return {k: v.detach().to("cpu", copy=True) for k, v in self.model.named_parameters()}

    def moved_since(self, reference: dict[str, torch.Tensor]) -> int:
        """How many parameter tensors differ from ``reference`` (same names, any device)."""
        return sum(
            not torch.equal(reference[k].to(v.device), v.detach())
            for k, v in self.model.named_parameters()
        )


@dataclass
class StepRecords:
    """What one step leaves for the segment's files: rollout rows, credit ledger, metrics, its
    phase seconds (:data:`PHASES`; the volatile sidecar's, not the metrics') and the known truth
    of its rollouts' labelled blocks."""

    rows: list[RolloutRow]
    ledger: list[CreditLedgerRow]
    metrics: MetricsRow
    seconds: dict[str, float] = field(default_factory=dict)
    truth: list[TruthRow] = field(default_factory=list)


def start_trainer(
    spec: SegmentSpec, cfg: TrainConfig, health: HealthSettings, device: torch.device
) -> Trainer:
    """The model, optimiser, cursor and monitor where the previous segment left them (or fresh
    from the base model at step 0, seeded by the run's seed)."""
    from transformers import AutoModelForCausalLM

    opt_state, state = load_state(spec.start_state)
    if spec.start_state is None:
        seed_rng(cfg.seed)
    model = AutoModelForCausalLM.from_pretrained(str(spec.start_model), dtype=torch.float32)
    # transformers types PreTrainedModel.to through a wrapper that mypy reads as unbound
    model.to(device)  # type: ignore[arg-type]
    if cfg.gradient_checkpointing:
        enable_activation_checkpointing(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    if opt_state is not None:
        optimizer.load_state_dict(opt_state)
    initial = {k: v.detach().clone() for k, v in model.named_parameters()}  # tied: once
    cursor = DataCursor.from_dict(state["cursor"]) if state else DataCursor(cfg.seed)
    monitor = HealthMonitor(
        health.unavailable_streak, health.availability_window, health.min_availability
    )
    monitor.restore(state.get("health", {}))
    parameters = sum(v.numel() for v in initial.values())
    return Trainer(model, optimizer, cursor, monitor, initial, parameters)


def policy_update(trainer: Trainer, rows, credit, cfg: TrainConfig) -> dict[str, Any]:
    """The optimiser step(s) of one step on its rollouts and their credited advantages."""
    weigh = cfg.negative_weight
    sequences = [
        UpdateSequence(r["token_ids"], r["logprobs"], v, weigh_negative(a, weigh), r["instance_id"])
        for r, v, a in zip(rows, credit.valid, credit.advantages, strict=True)
    ]
    return step_update(
        trainer.model,
        trainer.optimizer,
        sequences,
        mini_batches=cfg.mini_batches,
        epochs=cfg.epochs,
        policy_loss=cfg.policy_loss,
        loss_aggregation=cfg.loss_aggregation,
        ppo_clip=cfg.ppo_clip,
        dppo_delta=cfg.dppo_delta,
        temperature=cfg.temperature,
        micro_batch_size=cfg.micro_batch_size,
        max_grad_norm=cfg.max_grad_norm,
        micro_batch_tokens=cfg.micro_batch_tokens,
    )


def train_step(
    spec: SegmentSpec,
    step: int,
    trainer: Trainer,
    by_id: dict[str, Task],
    cfg: TrainConfig,
    workers: WorkerPool,
    log=print,
) -> StepRecords:
    """One GRPO step: play the step's groups with the current weights, assemble advantages with
    the arm's credit, update the policy, watch the health alerts, record the metrics."""
    workers.set_weights(trainer.model.state_dict())
    rows, queries, seconds, trainer.cursor = play_step(
        spec.run, step, trainer.cursor, by_id, cfg, workers
    )
    credit = assemble_step(
        rows,
        queries,
        run=spec.run,
        arm=cfg.arm,
        lam=cfg.credit_lambda,
        c=cfg.credit_c,
        normalize_std=cfg.normalize_std,
        zero_variance_filter=cfg.zero_variance_filter,
    )
    t0 = time.monotonic()
    update = policy_update(trainer, rows, credit, cfg)
    seconds["update"] = time.monotonic() - t0
    attempted = [
        row["available"] for row in credit.ledger if row["reason"] != CreditReason.NOT_QUERIED
    ]
    alerts = trainer.monitor.observe(attempted)
    for alert in alerts:
        log(f"ALERT {spec.run} step {step}: {alert}")
    m = step_metrics(spec.run, step, rows, credit, update, alerts, trainer.parameters)
    log(
        f"{spec.run} step {step}: reward {m['reward_mean']:.3f} pass {m['pass_rate']:.2f} "
        f"entropy {m['entropy']:.3f} grad {m['grad_norm']:.3f} CF {m['cf_available']}/"
        f"{m['cf_sent']} (non-zero {m['cf_nonzero']}) credit L1 {m['credit_mass_l1']:.3f}"
    )
    # step_batch builds each ledger row with CreditLedgerRow's keys
    ledger = cast(list[CreditLedgerRow], credit.ledger)
    truth = [t for q in queries for t in q["truth_rows"]]
    return StepRecords(rows, ledger, m, step_seconds(seconds), truth)


def segment_receipt(
    spec: SegmentSpec,
    cfg: TrainConfig,
    rows: list[RolloutRow],
    metrics: list[MetricsRow],
    changed: int,
    device: torch.device,
    budget: BudgetGuard | None = None,
    updates: list[UpdateCheck] | None = None,
) -> SegmentReceipt:
    """The segment's receipt: its steps, changed tensors, alerts, the budget's ledger when one
    guards the run, the checks of the run's first updates that fell in this segment
    (``update_gate``), and at the first segment of a run the gate of METHOD §5. The budget's
    time spent stays out of it: :func:`segment_volatile` holds it with the wall times."""
    receipt: SegmentReceipt = {
        "run": spec.run,
        "arm": cfg.arm,
        "seed": cfg.seed,
        "steps": [spec.start_step + 1, spec.start_step + spec.steps],
        "start_model": str(spec.start_model),
        "changed_tensors": changed,
        "alerts": [a for m in metrics for a in json.loads(m["alerts"])],
        "device": str(device),
    }
    if budget is not None:
        receipt["budget"] = split_ledger(budget.ledger())[0]
    if updates:
        receipt["update_gate"] = update_gate(updates)
    if spec.start_state is None:
        receipt["first_segment_gate"] = first_segment_gate(
            cfg.arm, rows, metrics, changed, updates or []
        )
    return receipt


def train_segment(
    spec: SegmentSpec,
    cfg: TrainConfig,
    pool: list[Task],
    workers: WorkerPool,
    health: HealthSettings,
    device: torch.device,
    log=print,
    callbacks: Sequence[StepCallback] = (),
) -> SegmentReceipt:
    """Run ``spec.steps`` steps and write ``spec.out_dir``; return the segment receipt.

    ``callbacks`` are the loop's hooks (:mod:`editcredit.rl.step_callbacks`; the job registers
    :func:`~editcredit.rl.step_callbacks.segment_callbacks`), called in their order before each
    step and in reverse after it: the storage guard reads the free disk and inodes before each
    step, the budget guard checks each step before it runs, the early update gate checks each
    of the run's first :data:`EARLY_UPDATES` updates of an arm with counterfactual credit as
    soon as it is taken, the scalar logger writes the live TensorBoard scalars. A guard stops
    the segment by raising (:class:`StorageLow`, :class:`BudgetExceeded`,
    :class:`UpdateGateFailed`, each with its receipt), and nothing is written.
    The receipt holds the budget's ledger and the gate's checks; its ``volatile`` key holds
    :func:`segment_volatile` (the job writes it to the sidecar, never into ``segment.json``).
    """
    started = time.monotonic()
    by_id = {t.instance_id: t for t in pool}
    trainer = start_trainer(spec, cfg, health, device)
    all_rows, ledger, seconds = [], [], []
    truth: list[TruthRow] = []
    metrics: list[MetricsRow] = []
    last = spec.start_step + spec.steps
    for callback in callbacks:
        callback.on_train_begin()
    label = f"train {spec.run} steps {spec.start_step + 1}..{last}"
    progress = Progress(label, spec.steps, "steps").start()
    try:
        for step in range(spec.start_step + 1, last + 1):
            progress.update(detail=f"step {step}")
            state = StepState(step, trainer, metrics)
            for callback in callbacks:
                callback.on_step_begin(state)
            records = train_step(spec, step, trainer, by_id, cfg, workers, log)
            all_rows += records.rows
            ledger += records.ledger
            truth += records.truth
            metrics.append(records.metrics)
            seconds.append(records.seconds)
            state.records = records
            for callback in reversed(callbacks):
                callback.on_step_end(state)
            progress.update(advance=1)
    finally:
        for callback in reversed(callbacks):
            callback.on_train_end()
        progress.close()
    changed = trainer.changed_tensors()
    budget, updates = budget_of(callbacks), updates_of(callbacks)
    receipt = segment_receipt(spec, cfg, all_rows, metrics, changed, device, budget, updates)
    receipt["volatile"] = segment_volatile(spec, seconds, started, budget)
    save_segment(
        spec.out_dir,
        trainer.model,
        spec.start_model,
        trainer.optimizer,
        {
            "cursor": trainer.cursor.to_dict(),
            "health": trainer.monitor.state(),
            "step": spec.start_step + spec.steps,
        },
        {
            "rollouts.parquet": lambda p: write_table(all_rows, ROLLOUT_SCHEMA, p),
            "credit.parquet": lambda p: write_table(ledger, CREDIT_SCHEMA, p),
            "truth.parquet": lambda p: write_table(truth, TRUTH_SCHEMA, p),
            "metrics.parquet": lambda p: write_table(metrics, METRICS_SCHEMA, p),
        },
    )
    return receipt


def step_cost(rows, credit_ledger, metrics_row, seconds: float) -> tuple[dict[str, float], int]:
    """One step's spend against a budget, and its attempts that failed on infrastructure
    (masked rollouts and unavailable counterfactual queries), counted apart."""
    visible_runs = sum(
        1 for r in rows for t in json.loads(r["turns"] or "[]") if t.get("kind") == "run"
    )
    gradings = len(rows) + int(metrics_row["cf_sent"]) + visible_runs
    failed = sum(1 for r in rows if r["masked"]) + sum(
        1 for q in credit_ledger if not q["available"] and q["reason"] != CreditReason.NOT_QUERIED
    )
    cost = {
        "tokens": float(metrics_row["generated_tokens"]),
        "gradings": float(gradings),
        "wall_seconds": seconds,
    }
    return cost, failed
