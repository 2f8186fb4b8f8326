"""What an evaluation's attempts cost, for its budget (METHOD §11): generated tokens (the
trajectories' generated-token masks), sandbox gradings (the test runs inside episodes and the
gradings of final patches, re-runs included) and attempts that failed on infrastructure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow.parquet as pq

from editcredit.evaluation.ledger import GENERATION_KINDS
from editcredit.evaluation.slots import Attempt


def generated_tokens(attempts: Iterable[Attempt]) -> int:
    """Tokens the policy generated in the attempts' episodes (from their trajectory files)."""
    rows: dict[str, set[int]] = {}
    for a in attempts:
        if a.trajectory is not None:
            rows.setdefault(a.trajectory.path, set()).add(a.trajectory.row)
    total = 0
    for path, wanted in rows.items():
        masks = pq.read_table(path, columns=["loss_mask"]).column("loss_mask").to_pylist()
        total += sum(sum(masks[k]) for k in wanted)
    return total


def attempts_cost(attempts: Sequence[Attempt]) -> tuple[dict[str, float], int]:
    """Tokens and gradings of some attempts, and how many failed on infrastructure."""
    cost = {
        "tokens": float(generated_tokens(attempts)),
        "gradings": float(sum(a.sandbox_runs for a in attempts)),
    }
    return cost, sum(a.outcome == "infra_failure" for a in attempts)


def journal_spend(history: Mapping[Any, Sequence[Attempt]]) -> tuple[dict[str, float], int]:
    """What the journal's earlier attempts of the slice spent (a resumed evaluation counts
    them against its budget): tokens, gradings, one step per generation batch (trajectory
    file), infrastructure failures apart. Their wall time is not recoverable (batches overlap
    gradings) and counts no seconds."""
    attempts = [a for slot in history.values() for a in slot]
    cost, infra = attempts_cost(attempts)
    # the attempts of one batch share its seed and start time
    batches = {(a.seed, a.started) for a in attempts if a.kind in GENERATION_KINDS}
    cost["steps"] = float(len(batches))
    return cost, infra
