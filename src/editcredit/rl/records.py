"""Schemas of the segment records (docs/outputs.md): rollouts, credit ledger, block truth,
metrics; and the records that cross the rollout workers' seam.

Each Parquet schema has a ``TypedDict`` of one row whose keys are its columns (a test holds them
equal): :class:`RolloutRow`, :class:`CreditLedgerRow`, :class:`TruthRow`, :class:`MetricsRow`. A
rollout worker returns a :class:`GroupResult` per task group: its rollout rows, one
:class:`CfQuery` per rollout (with the known truth of its blocks) and the phases' seconds. Names
are METHOD's (§3): ``Y``, ``F``, ``G`` the parts of a grading, ``U = Y + wF*F - wG*G``,
``D = U(original) - U(counterfactual)``, ``s`` the credit scale, ``m`` the credited and ``L`` the
valid generated tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.agent.trajectory import TRAJECTORY_SCHEMA, TrajectoryRow
from editcredit.protocol.budget import BudgetLedger
from editcredit.rl.gates import FirstSegmentGate, UpdateGateRecord

ROLLOUT_SCHEMA = TRAJECTORY_SCHEMA.append(pa.field("step", pa.int32())).append(
    pa.field("sample", pa.int16())
)

CREDIT_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("step", pa.int32()),
        ("rollout_key", pa.string()),
        ("instance_id", pa.string()),
        ("selected_block", pa.int16()),
        ("available", pa.bool_()),
        ("reason", pa.string()),
        ("U_original", pa.float64()),
        ("U_counterfactual", pa.float64()),
        ("D", pa.float64()),
        ("dY", pa.float64()),
        ("dF", pa.float64()),
        ("dG", pa.float64()),
        ("s", pa.float64()),
        ("m", pa.int32()),
        ("L", pa.int32()),
        ("credit_l1", pa.float64()),
        ("cf_patch", pa.string()),  # the counterfactual tree as a patch ('' when not sent)
        ("cf_report", pa.string()),  # JSON: its grading report, as stored_report ('' when not sent)
    ]
)


class RolloutRow(TrajectoryRow):
    """One row of rollouts.parquet (:data:`ROLLOUT_SCHEMA`): a trajectory and its place."""

    step: int  # the training step
    sample: int  # the sample's index in its task's group


class TruthRow(TypedDict):
    """One row of truth.parquet (:data:`~editcredit.data.block_truth.TRUTH_SCHEMA`): the known
    truth of one labelled block of a rollout, as ``agent.episode_truth.truth_rows`` gives it,
    with its run and step."""

    run: str
    step: int
    rollout_key: str
    instance_id: str
    block: int  # the block's index in the rollout's edit_blocks
    eligible: bool
    label: str  # fix, other or harmful
    fixed_bugs: str  # comma-separated indices of the planted bugs it fixed ('' when none)
    tokens: int  # valid generated tokens of its turns


class CfQuery(TypedDict):
    """A rollout's counterfactual query as the worker returns it (aligned with its rollout row).

    ``U_*`` is None when that grading is unavailable; ``parts_*`` are its ``[Y, F, G]``.
    """

    rollout_key: str  # the rollout's key
    selected_block: int | None  # the score-blind selected block; None when none is eligible
    credited_turns: list[int]  # the complete assistant turns that produced the selected block
    U_original: float | None  # U of the final patch
    parts_original: list[float] | None  # [Y, F, G] of the final patch
    sent: bool  # whether the counterfactual tree was graded
    U_counterfactual: float | None  # U of the tree with the selected block reverted
    parts_counterfactual: list[float] | None  # [Y, F, G] of that tree
    reason: str  # a records.CreditReason value: why no D ('' while it may have one)
    cf_patch: str | None  # the counterfactual tree as a patch (None when not sent)
    cf_report: str | None  # JSON: its grading report, as stored_report (None when not sent)
    truth: list[float] | None  # per token, the known truth of its block for the truth control
    # T (agent.episode_truth.played_truth: +1 fix, -1 harmful, 0 else); None for other arms
    truth_rows: list[TruthRow]  # the known truth of its labelled blocks, every arm (none for a
    # task without planted truth)


class PhaseSeconds(TypedDict):
    """Wall seconds of a task group's phases in its worker (volatile: never in the records)."""

    rollout: float  # playing the episodes
    grading: float  # grading the final patches
    counterfactual: float  # grading the counterfactual trees


class GroupResult(TypedDict):
    """What a rollout worker returns for one task group (plain and picklable)."""

    rows: list[RolloutRow]  # one per sample, in sample order
    queries: list[CfQuery]  # aligned with ``rows``
    seconds: PhaseSeconds


class CreditLedgerRow(TypedDict):
    """One row of credit.parquet (:data:`CREDIT_SCHEMA`): the outcome of one rollout's query."""

    run: str
    step: int
    rollout_key: str
    instance_id: str
    selected_block: int  # the selected block (a ledger row exists only where one is)
    available: bool  # whether D was computed
    reason: str  # a records.CreditReason value ('' when available)
    U_original: float | None
    U_counterfactual: float | None
    D: float | None  # U_original - U_counterfactual
    dY: float | None  # original minus counterfactual Y (None when D is)
    dF: float | None  # ... of F
    dG: float | None  # ... of G
    s: float | None  # the credit scale, None without D or without credited tokens
    m: int  # credited tokens
    L: int  # valid generated tokens
    credit_l1: float  # the L1 mass of the arm's auxiliary term on this rollout
    cf_patch: str  # the counterfactual tree as a patch ('' when not sent)
    cf_report: str  # JSON: its grading report, as stored_report ('' when not sent)


_F = pa.float64()
METRICS_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("step", pa.int32()),
        ("reward_mean", _F),
        ("pass_rate", _F),
        ("entropy", _F),
        ("grad_norm", _F),
        ("loss", _F),
        ("micro_batches", pa.int32()),
        ("optimizer_steps", pa.int32()),
        ("loss_masked_share", _F),  # valid tokens the policy loss's trust region masked
        ("rollouts", pa.int32()),
        ("masked_share", _F),
        ("masked_by_cause", pa.string()),  # JSON: cause -> masked rollouts of the step
        ("format_error_rate", _F),
        ("p2p_regression_rate", _F),
        ("context_budget_rate", _F),
        ("generated_tokens", pa.int64()),
        ("cf_sent", pa.int32()),
        ("cf_available", pa.int32()),
        ("cf_nonzero", pa.int32()),
        ("credit_mass_l1", _F),
        ("credit_mass_signed", _F),
        ("credit_rollouts", pa.int32()),
        ("update_tokens", pa.int64()),
        ("update_model_flops", _F),  # the phases' wall seconds: the segment's volatile sidecar
        ("alerts", pa.string()),
    ]
)


class MetricsRow(TypedDict):
    """One row of metrics.parquet (:data:`METRICS_SCHEMA`): one training step's health."""

    run: str
    step: int
    reward_mean: float  # mean terminal reward of the unmasked rollouts
    pass_rate: float  # mean Y of the unmasked rollouts
    entropy: float
    grad_norm: float
    loss: float
    micro_batches: int
    optimizer_steps: int
    loss_masked_share: float  # valid tokens the policy loss's trust region masked
    rollouts: int
    masked_share: float
    masked_by_cause: str  # JSON: cause -> masked rollouts of the step
    format_error_rate: float
    p2p_regression_rate: float
    context_budget_rate: float
    generated_tokens: int
    cf_sent: int  # counterfactual queries sent
    cf_available: int  # ... that gave a D
    cf_nonzero: int  # ... whose D is not zero
    credit_mass_l1: float
    credit_mass_signed: float
    credit_rollouts: int  # rollouts whose auxiliary term is not all zero
    update_tokens: int
    update_model_flops: float  # 6 x parameters x update_tokens
    alerts: str  # JSON: the health monitor's alerts of the step


class StorageCheck(TypedDict):
    """The free disk before a segment trains (``rl.train_job.check_storage``)."""

    free_bytes: int  # free bytes of the output's file system (the volatile sidecar's)
    expected_checkpoint_bytes: int  # what the segment's checkpoint will take
    min_free_gb: float  # the floor of training.health


class SegmentStorage(TypedDict):
    """A receipt's ``storage``: the storage check less its free bytes (the clock's fact)."""

    expected_checkpoint_bytes: int
    min_free_gb: float


class _WorkersKind(TypedDict):
    kind: str  # in_process, processes or ray


class StableWorkers(_WorkersKind, total=False):
    """A receipt's ``workers``: where the rollout workers ran, without what changes between
    runs (addresses, node ids, which actor took which groups: the volatile sidecar's)."""

    workers: int  # worker processes or Ray actors (none for in_process)


class _SegmentReceiptCore(TypedDict):
    run: str
    arm: str  # a records.Arm value
    seed: int  # the training seed
    steps: list[int]  # [first, last] training step of the segment
    start_model: str  # the model the segment started from
    changed_tensors: int  # parameter tensors the segment's updates changed
    alerts: list[str]  # the health monitor's alerts, in step order
    device: str


class SegmentReceipt(_SegmentReceiptCore, total=False):
    """A segment's receipt (``segment.json``): what ran and what was checked, no wall time.

    :func:`~editcredit.rl.segment.segment_receipt` writes the required keys (and the first three
    optional ones when they apply); the training job adds the pool, the base check, the workers,
    the grader and the storage it ran with. ``volatile`` (the clock's facts) rides along until
    the job moves it to the segment's volatile sidecar.
    """

    budget: BudgetLedger  # the budget's ledger when one guards the run (no timed costs)
    update_gate: UpdateGateRecord  # the checks of the run's first updates
    first_segment_gate: FirstSegmentGate  # METHOD §5's gate (the run's first segment)
    volatile: dict[str, Any]  # wall times and budget time (the sidecar's)
    quarantined: dict[str, str]  # task -> why the pool quarantined it
    pool: list[str]  # the training pool's task ids
    base_check: dict[str, Any]  # the base model's check against its receipt
    workers: StableWorkers  # the rollout workers, without their volatile facts
    grader: dict[str, Any]  # the grader's identity (open: grading.grader_identity's record)
    storage: SegmentStorage  # the storage guard's settings


class _ControlReceiptCore(TypedDict):
    run: str  # control-s{seed}
    seed: int
    steps: int  # the steps replayed, 1..steps
    rollouts: int
    base_model: str
    device: str
    workers: StableWorkers
    grader: dict[str, Any]  # the grader's identity (open: grading.grader_identity's record)
    budget: BudgetLedger  # without its timed costs (the sidecar's)


class ControlReceipt(_ControlReceiptCore, total=False):
    """The no-learning control's receipt (``results/training/control/s{seed}.json``, sorted
    keys): what was replayed, where, under which budget; the training job's set-up adds the
    quarantine, the pool and the base check."""

    quarantined: dict[str, str]
    pool: list[str]
    base_check: dict[str, Any]  # audit.base_pin.check_base's record


def write_table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema, path: Path) -> None:
    """Rows as a Parquet file with exactly ``schema`` (an empty list gives an empty table)."""
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, compression="zstd")
