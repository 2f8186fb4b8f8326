"""One step's rollouts -> token advantages with credit, the credit ledger and credit metrics.

Pure: rollout rows and counterfactual query records in, arrays and rows out (METHOD §3-§4).
The terminal rewards and the group advantages are computed first, identically for every arm;
the arm's auxiliary term is then added to the token advantages and never to the rewards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from editcredit.records import CreditReason
from editcredit.rl.advantages import group_advantages
from editcredit.rl.credit import CreditInput, arm_credit, queries_cf, reads_truth, scale


@dataclass
class StepCredit:
    """Per rollout: valid-token mask and token advantages (credit included); ledger; metrics."""

    valid: list[np.ndarray]
    advantages: list[np.ndarray]
    sequence_advantages: list[float | None]
    ledger: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)


def _query_d(query: Mapping[str, Any]) -> float | None:
    if not query["sent"] or query["U_counterfactual"] is None or query["U_original"] is None:
        return None
    return float(query["U_original"]) - float(query["U_counterfactual"])


def assemble_step(
    rows: Sequence[Mapping[str, Any]],
    queries: Sequence[Mapping[str, Any]],
    *,
    run: str,
    arm: str,
    lam: float,
    c: float,
    normalize_std: bool,
    zero_variance_filter: bool,
) -> StepCredit:
    """Advantages, credit and ledger of one step's rollouts (``rows`` and ``queries`` aligned).

    With ``zero_variance_filter`` the rollouts of groups whose rewards are all equal leave the
    loss like masked ones (METHOD keeps them by default).
    """
    if len(rows) != len(queries):
        raise ValueError(f"{len(rows)} rollouts but {len(queries)} query records")
    rewards = [None if r["masked"] else float(r["reward"]) for r in rows]
    if zero_variance_filter:
        by_group: dict[str, set[float]] = {}
        for r, w in zip(rows, rewards, strict=True):
            if w is not None:
                by_group.setdefault(r["instance_id"], set()).add(w)
        flat = {g for g, values in by_group.items() if len(values) == 1}
        rewards = [
            None if r["instance_id"] in flat else w for r, w in zip(rows, rewards, strict=True)
        ]
    seq_adv = group_advantages(rewards, [r["instance_id"] for r in rows], normalize_std)
    out = StepCredit(valid=[], advantages=[], sequence_advantages=seq_adv)
    cf, truth_read = queries_cf(arm), reads_truth(arm)
    l1 = signed = 0.0
    reached = 0
    for row, query, adv in zip(rows, queries, seq_adv, strict=True):
        mask = np.asarray(row["loss_mask"], dtype=np.int8) == 1
        turns = np.asarray(row["turn_of_token"], dtype=np.int64)
        if adv is None:  # masked rollout: out of the loss, never scored 0 (METHOD §5)
            out.valid.append(np.zeros_like(mask))
            out.advantages.append(np.zeros(mask.shape, dtype=np.float64))
            continue
        credited = mask & np.isin(turns, query["credited_turns"])
        D = _query_d(query) if cf else None
        truth = _query_truth(query) if truth_read else None
        inp = CreditInput(valid=mask, credited=credited, D=D, A=adv, lam=lam, c=c, truth=truth)
        aux = arm_credit(arm, inp)
        out.valid.append(mask)
        out.advantages.append(np.where(mask, adv, 0.0) + aux)
        l1 += float(np.abs(aux).sum())
        signed += float(aux.sum())
        reached += int(np.any(aux != 0.0))
        if cf and query["selected_block"] is not None:
            out.ledger.append(
                _ledger_row(run, row, query, D, inp, lam, c, float(np.abs(aux).sum()))
            )
    sent = [q for q in queries if q["sent"]] if cf else []
    available = [q for q in sent if _query_d(q) is not None]
    out.metrics = {
        "cf_sent": len(sent),
        "cf_available": len(available),
        "cf_nonzero": sum(_query_d(q) != 0.0 for q in available),
        "credit_mass_l1": l1,
        "credit_mass_signed": signed,
        "credit_rollouts": reached,
    }
    return out


def _query_truth(query: Mapping[str, Any]) -> np.ndarray | None:
    """The per-token truth the worker labelled for the truth control (None: none, e.g. a task
    without planted truth, whose rollouts then get no credit)."""
    truth = query.get("truth")
    return None if truth is None else np.asarray(truth, dtype=np.float64)


def part_differences(query: Mapping[str, Any]) -> dict[str, float | None]:
    """Original minus counterfactual of each part of U (METHOD §3: ``D = dY + wF*dF - wG*dG``):
    which tests the reverted block moved, FAIL_TO_PASS (Y, F) or PASS_TO_PASS (G)."""
    original, counter = query.get("parts_original"), query.get("parts_counterfactual")
    if original is None or counter is None:
        return {"dY": None, "dF": None, "dG": None}
    return {f"d{k}": float(o) - float(c) for k, o, c in zip("YFG", original, counter, strict=True)}


def _ledger_row(run, row, query, D, inp: CreditInput, lam, c, credit_l1) -> dict[str, Any]:
    available = D is not None
    return {
        "run": run,
        "step": int(row["step"]),
        "rollout_key": row["rollout_key"],
        "instance_id": row["instance_id"],
        "selected_block": int(query["selected_block"]),
        "available": available,
        "reason": ""
        if available
        else (query["reason"] or CreditReason.COUNTERFACTUAL_UNAVAILABLE.value),
        "U_original": query["U_original"],
        "U_counterfactual": query["U_counterfactual"],
        "D": D,
        **part_differences(query if available else {}),
        "s": scale(D, inp.m, inp.L, lam, c) if available and inp.m > 0 else None,
        "m": inp.m,
        "L": inp.L,
        "credit_l1": credit_l1,
        "cf_patch": query.get("cf_patch") or "",
        "cf_report": query.get("cf_report") or "",
    }
