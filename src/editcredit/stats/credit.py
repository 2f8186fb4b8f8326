"""Where the credit went (METHOD §9): per arm, counts over the credit ledgers of its runs.

Of the counterfactual queries: how many were available, how many gave a positive, negative or
zero D, how many scales ``s`` hit the cap (``s < 1``: the per-token credit was clipped to ``c``),
and which tests moved a non-zero D: FAIL_TO_PASS (its ``dY`` or ``dF`` part), PASS_TO_PASS
(``dG``) or both. Beside them, the share of valid tokens the policy loss's trust region masked
(``loss_masked_share`` of metrics.parquet, weighted by the tokens through the update). Ledgers
written before the parts of D were recorded count their parts as unknown, never as zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

import numpy as np
import pandas as pd

from editcredit.records import CreditReason

#: The ledger's reason for a query its rate did not send (not a query of the arm's credit).
NOT_QUERIED = CreditReason.NOT_QUERIED.value


class CreditCounts(TypedDict):
    """Where one arm's credit went: counts over its runs' credit ledgers (the module docstring).
    The ``moved_by_*`` counts are None when a ledger predates the parts of D."""

    queries: int  # counterfactual queries sent (not those the rate held back)
    available: int  # ... that gave a D
    positive: int  # ... with D > 0
    negative: int  # ... with D < 0
    zero: int  # ... with D = 0
    scale_capped: int  # ... whose scale s < 1 (the per-token credit was clipped to c)
    moved_by_fail_to_pass: int | None  # non-zero D moved by dY or dF alone
    moved_by_pass_to_pass: int | None  # ... by dG alone
    moved_by_both: int | None  # ... by both
    loss_masked_share: float | None  # share of valid tokens the trust region masked


def credit_diagnostics(
    credit_by_run: Mapping[str, pd.DataFrame], metrics_by_run: Mapping[str, pd.DataFrame]
) -> CreditCounts:
    """The counts of one arm, pooled over its runs (see the module docstring)."""
    frames = [f for f in credit_by_run.values() if len(f)]
    ledger = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    out: CreditCounts = {
        "queries": 0,
        "available": 0,
        "positive": 0,
        "negative": 0,
        "zero": 0,
        "scale_capped": 0,
        "moved_by_fail_to_pass": None,
        "moved_by_pass_to_pass": None,
        "moved_by_both": None,
        "loss_masked_share": _masked_share(metrics_by_run),
    }
    if ledger.empty:
        return out
    sent = ledger[ledger["reason"] != NOT_QUERIED]
    live = sent[sent["available"].astype(bool)]
    d = live["D"].astype(float)
    out.update(
        {
            "queries": len(sent),
            "available": len(live),
            "positive": int((d > 0).sum()),
            "negative": int((d < 0).sum()),
            "zero": int((d == 0).sum()),
            "scale_capped": int((live["s"].astype(float) < 1).sum()),
        }
    )
    if {"dY", "dF", "dG"} <= set(live.columns) and live[["dY", "dF", "dG"]].notna().all().all():
        moved = live[d != 0]
        f2p = (moved["dY"].astype(float) != 0) | (moved["dF"].astype(float) != 0)
        p2p = moved["dG"].astype(float) != 0
        out.update(
            {
                "moved_by_fail_to_pass": int((f2p & ~p2p).sum()),
                "moved_by_pass_to_pass": int((p2p & ~f2p).sum()),
                "moved_by_both": int((f2p & p2p).sum()),
            }
        )
    return out


def _masked_share(metrics_by_run: Mapping[str, pd.DataFrame]) -> float | None:
    frames = [m for m in metrics_by_run.values() if "loss_masked_share" in m.columns and len(m)]
    if not frames:
        return None
    metrics = pd.concat(frames, ignore_index=True)
    share = metrics["loss_masked_share"].astype(float).to_numpy()
    tokens = metrics["update_tokens"].astype(float).to_numpy()
    ok = np.isfinite(share) & (tokens > 0)
    return float((share[ok] * tokens[ok]).sum() / tokens[ok].sum()) if ok.any() else None
