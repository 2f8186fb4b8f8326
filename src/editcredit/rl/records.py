"""Schemas of the segment records (docs/outputs.md): rollouts, credit ledger, metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.agent.trajectory import TRAJECTORY_SCHEMA

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


def write_table(rows: list[dict[str, Any]], schema: pa.Schema, path: Path) -> None:
    """Rows as a Parquet file with exactly ``schema`` (an empty list gives an empty table)."""
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, compression="zstd")
