"""The stop study's evaluation: every policy's success and tokens, the success-cost curve,
paired task-bootstrap CIs against the best fixed policy at matched cost, and the gate.

Matched cost: the comparator of a policy is the fixed policy with the highest success among
those that spend no more tokens than it on the same split (the cheapest fixed policy when none
does). The difference is paired per task (mean success over a task's trajectories) and its CI is
the percentile bootstrap over tasks (:func:`editcredit.stats.bootstrap.mean_ci`).

The gate (protocol ``gate``) is chosen on the fit split and applied once to the sealed split:
the gated policy's grid value with the best fit success at no more than ``max_cost_ratio`` of the
agent's own fit tokens, against the best fixed policy under the same fit cap; on the sealed split
the paired difference must reach ``min_difference`` with its CI lower bound above
``ci_lower_above``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from editcredit.stats.bootstrap import mean_ci
from editcredit.stopping.policies import Policy, outcomes, per_task, summarize
from editcredit.stopping.records import (
    CurvePoint,
    GateChoice,
    PairedDifference,
    PolicyRow,
    PolicySummary,
    StopGateVerdict,
)


def evaluate_all(df: pd.DataFrame, policies: Mapping[str, Policy]) -> dict[str, pd.DataFrame]:
    """Per-trajectory outcomes of every policy on ordered, labelled points."""
    return {name: outcomes(df, policy(df)) for name, policy in policies.items()}


def paired_difference(
    a: pd.DataFrame, b: pd.DataFrame, boot: Mapping[str, Any]
) -> PairedDifference:
    """Success of ``a`` minus ``b``, paired per task, with the task-bootstrap CI."""
    ta, tb = per_task(a), per_task(b)
    if list(ta.index) != list(tb.index):
        raise ValueError("the two policies were evaluated on different tasks")
    d = (ta["success"] - tb["success"]).to_numpy(float)
    if len(d) == 0:
        return {"difference": None, "ci": [None, None], "tasks": 0}
    ci = mean_ci(
        d,
        n_resamples=int(boot["n_resamples"]),
        rng_seed=int(boot["rng_seed"]),
        level=float(boot["level"]),
    )
    return {"difference": ci.estimate, "ci": [ci.lower, ci.upper], "tasks": len(d)}


def best_fixed_at(
    summaries: Mapping[str, PolicySummary] | Mapping[str, PolicyRow],
    fixed: list[str],
    tokens: float,
) -> str:
    """The fixed policy with the best success within ``tokens`` (ties: fewer tokens, name)."""
    within = [f for f in fixed if summaries[f]["tokens"] <= tokens + 1e-9]
    if not within:
        return min(fixed, key=lambda f: (summaries[f]["tokens"], f))
    return max(within, key=lambda f: (summaries[f]["success"], -summaries[f]["tokens"], f))


def policy_table(
    outs: Mapping[str, pd.DataFrame],
    kinds: Mapping[str, str],
    boot: Mapping[str, Any],
) -> dict[str, PolicyRow]:
    """Every policy's summary and, for the non-fixed ones, the CI against the best fixed policy
    at matched cost."""
    summaries = {name: summarize(out) for name, out in outs.items()}
    fixed = [n for n, k in kinds.items() if k == "fixed"]
    table: dict[str, PolicyRow] = {}
    for name, s in summaries.items():
        row: PolicyRow = {"kind": kinds[name], **s}
        if kinds[name] != "fixed" and fixed and s["trajectories"]:
            ref = best_fixed_at(summaries, fixed, s["tokens"])
            row["vs_fixed"] = {"policy": ref, **paired_difference(outs[name], outs[ref], boot)}
        table[name] = row
    return table


def curve(table: Mapping[str, PolicyRow]) -> list[CurvePoint]:
    """The success-cost points of every policy, cheapest first."""
    pts: list[CurvePoint] = [
        {"policy": n, "kind": r["kind"], "tokens": r["tokens"], "success": r["success"]}
        for n, r in table.items()
        if r["trajectories"]
    ]
    return sorted(pts, key=lambda p: (p["tokens"], -p["success"], p["policy"]))


def choose_gate(
    fit_table: Mapping[str, PolicyRow],
    kinds: Mapping[str, str],
    family: Mapping[str, str],
    gate: Mapping[str, Any],
) -> GateChoice:
    """On the fit split: the gated policy's grid value and the fixed comparator (both within
    ``max_cost_ratio`` x the agent's own tokens)."""
    cap = float(gate["max_cost_ratio"]) * fit_table["agent_submit"]["tokens"]
    candidates = [n for n in fit_table if family.get(n) == gate["policy"]]
    if not candidates:
        raise ValueError(f"gate policy {gate['policy']!r} has no evaluated grid value")
    within = [n for n in candidates if fit_table[n]["tokens"] <= cap + 1e-9] or candidates

    def key(n):
        return (fit_table[n]["success"], -fit_table[n]["tokens"], n)

    candidate = max(within, key=key)
    fixed = [n for n, k in kinds.items() if k == "fixed"]
    baseline = best_fixed_at(fit_table, fixed, cap)
    return {
        "candidate": candidate,
        "baseline": baseline,
        "fit_token_cap": cap,
        "fit": {n: PolicyRow(**fit_table[n]) for n in (candidate, baseline)},
    }


def gate_verdict(
    choice: GateChoice,
    sealed_outs: Mapping[str, pd.DataFrame],
    gate: Mapping[str, Any],
    boot: Mapping[str, Any],
) -> StopGateVerdict:
    """The gate on the sealed split (to be recorded once by the caller)."""
    cand, base = choice["candidate"], choice["baseline"]
    diff = paired_difference(sealed_outs[cand], sealed_outs[base], boot)
    lower = diff["ci"][0]  # None only with the difference (no task)
    ok = (
        diff["difference"] is not None
        and diff["difference"] >= float(gate["min_difference"])
        and lower is not None
        and lower > float(gate["ci_lower_above"])
    )
    sealed = {n: summarize(sealed_outs[n]) for n in (cand, base)}
    return {
        "candidate": cand,
        "baseline": base,
        "difference": diff["difference"],
        "ci": diff["ci"],
        "tasks": diff["tasks"],
        "sealed": sealed,
        "min_difference": float(gate["min_difference"]),
        "ci_lower_above": float(gate["ci_lower_above"]),
        "verdict": "pass" if ok else "fail",
    }


def as_float(x: Any) -> Any:
    """JSON-ready numbers (numpy scalars to Python)."""
    if isinstance(x, dict):
        return {k: as_float(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [as_float(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x
