"""Live training scalars for TensorBoard: each step's metrics row and its phase seconds (the
segment's volatile sidecar's, ``rl.timing.PHASES``), as they are recorded.

``tensorboard --logdir runs`` shows every arm and seed while they train. The event files are a
sidecar under ``runs/{run}/tensorboard/`` (one file per segment attempt, named by its steps):
``metrics.parquet`` stays the source of truth, and nothing hashes or reads these files.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

#: TensorBoard tag -> metrics.parquet column (rl.records.METRICS_SCHEMA) or phase seconds.
TAGS = {
    "reward/mean": "reward_mean",
    "reward/pass_rate": "pass_rate",
    "reward/format_error_rate": "format_error_rate",
    "reward/p2p_regression_rate": "p2p_regression_rate",
    "policy/entropy": "entropy",
    "update/loss": "loss",
    "update/grad_norm": "grad_norm",
    "update/loss_masked_share": "loss_masked_share",
    "credit/mass_l1": "credit_mass_l1",
    "credit/mass_signed": "credit_mass_signed",
    "credit/rollouts": "credit_rollouts",
    "counterfactual/sent": "cf_sent",
    "counterfactual/available": "cf_available",
    "counterfactual/nonzero": "cf_nonzero",
    "rollouts/masked_share": "masked_share",
    "rollouts/generated_tokens": "generated_tokens",
    "seconds/rollout": "seconds_rollout",
    "seconds/counterfactual": "seconds_counterfactual",
    "seconds/update": "seconds_update",
}


def scalar_values(metrics_row: dict[str, Any]) -> dict[str, float]:
    """The row's scalars by tag, plus the CF availability share and the step's seconds;
    missing or non-finite values are left out (TensorBoard would draw them as gaps anyway)."""
    out = {tag: metrics_row.get(column) for tag, column in TAGS.items()}
    sent = metrics_row.get("cf_sent") or 0
    out["counterfactual/available_share"] = (
        metrics_row.get("cf_available", 0) / sent if sent else None
    )
    parts = [metrics_row.get(k) for k in ("seconds_rollout", "seconds_counterfactual")]
    parts.append(metrics_row.get("seconds_update"))
    # summed only when none is missing
    out["seconds/step"] = (
        sum(cast(list[float], parts)) if all(p is not None for p in parts) else None
    )
    return {
        tag: float(v)
        for tag, v in out.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }


class ScalarLog:
    """One segment attempt's event file under ``logdir`` (``runs/{run}/tensorboard``)."""

    def __init__(self, logdir: str | Path, first_step: int, last_step: int) -> None:
        from tensorboardX import SummaryWriter

        Path(logdir).mkdir(parents=True, exist_ok=True)
        self._writer = SummaryWriter(
            logdir=str(logdir), filename_suffix=f".steps_{first_step}-{last_step}", flush_secs=5
        )

    def write(self, step: int, metrics_row: dict[str, Any]) -> None:
        for tag, value in scalar_values(metrics_row).items():
            self._writer.add_scalar(tag, value, global_step=step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


def read_scalars(logdir: str | Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the event files under ``logdir``: tag -> [(step, value)] in file order
    (TFRecord framing: length, its CRC, the Event protobuf, its CRC)."""
    import struct

    from tensorboardX.proto.event_pb2 import Event

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(Path(logdir).glob("events.out.tfevents.*")):
        data = path.read_bytes()
        at = 0
        while at + 12 <= len(data):
            (length,) = struct.unpack_from("<Q", data, at)
            event = Event.FromString(data[at + 12 : at + 12 + length])
            at += 12 + length + 4
            for value in event.summary.value:
                out.setdefault(value.tag, []).append((event.step, value.simple_value))
    return out
