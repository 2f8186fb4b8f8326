"""Stop policies and their exact offline evaluation (METHOD §12). Pure functions on a table of
decision points (the rows of ``checkpoints.parquet``, one trajectory = one ``trajectory`` key,
points in order).

A policy marks, at each point, whether it would stop there; its stop point on a trajectory is the
first marked point, or the trajectory's end (the agent's own stop) when none is. The outcome
there is exact: success is the point's ``correct_now`` label (an unresolved label counts as no
success and is reported), cost is ``tokens_so_far``. Scores aggregate as METHOD §8 does: the mean
over a task's trajectories, then the equal-weight mean over tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from editcredit.stopping.records import PolicySummary

Policy = Callable[[pd.DataFrame], np.ndarray]


def trajectory_key(df: pd.DataFrame) -> pd.Series:
    return df["model"] + "|" + df["evalset"] + "|" + df["rollout_key"]


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """Points sorted by trajectory and point, with a ``trajectory`` column."""
    out = df.copy()
    out["trajectory"] = trajectory_key(out)
    return out.sort_values(["trajectory", "point"], kind="stable").reset_index(drop=True)


def agent_submit(df: pd.DataFrame) -> np.ndarray:
    return df["is_end"].to_numpy(bool)


def after_k_edits(k: int) -> Policy:
    def stop(df: pd.DataFrame) -> np.ndarray:
        return (df["edits_so_far"] >= k).to_numpy(bool)

    return stop


def visible_pass(df: pd.DataFrame) -> np.ndarray:
    """Stop when the last visible run followed the last edit and every visible test passed."""
    return (
        (df["run_after_last_edit"] == 1) & (df["run_failed"] == 0) & (df["run_passed"] > 0)
    ).to_numpy(bool)


def visible_counts(share: float) -> Policy:
    """The rule on visible test counts: the last run followed the last edit and passed at least
    ``share`` of the visible tests."""

    def stop(df: pd.DataFrame) -> np.ndarray:
        return ((df["run_after_last_edit"] == 1) & (df["run_pass_share"] >= share)).to_numpy(bool)

    return stop


def fixed_policies(grid: Mapping[str, Any]) -> dict[str, Policy]:
    """The fixed policies and the visible-count rule of a protocol, by name."""
    policies: dict[str, Policy] = {
        "agent_submit": agent_submit,
        "first_edit": after_k_edits(1),
    }
    for k in grid.get("after_k_edits", []):
        if int(k) > 1:
            policies[f"after_{int(k)}_edits"] = after_k_edits(int(k))
    policies["visible_pass"] = visible_pass
    for q in grid.get("visible_counts", []):
        policies[f"visible_counts@{float(q):g}"] = visible_counts(float(q))
    return policies


def stop_rows(df: pd.DataFrame, marks: np.ndarray) -> pd.DataFrame:
    """Each trajectory's stop point: the first marked point, else its end. ``df`` ordered."""
    if len(marks) != len(df):
        raise ValueError(f"{len(marks)} stop marks for {len(df)} points")
    chosen = np.asarray(marks, bool) | df["is_end"].to_numpy(bool)
    first = pd.Series(chosen, index=df.index).groupby(df["trajectory"]).idxmax()
    return df.loc[first.to_numpy()].reset_index(drop=True)


def outcomes(df: pd.DataFrame, marks: np.ndarray) -> pd.DataFrame:
    """Per trajectory: task, success (0/1), unresolved (0/1) and tokens at the stop point."""
    stops = stop_rows(df, marks)
    return pd.DataFrame(
        {
            "trajectory": stops["trajectory"],
            "instance_id": stops["instance_id"],
            "success": stops["correct_now"].astype("Float64").eq(1).fillna(False).astype(int),
            "unresolved": stops["correct_now"].isna().astype(int).to_numpy(),
            "tokens": stops["tokens_so_far"].astype(float).to_numpy(),
            "point": stops["point"].to_numpy(),
        }
    )


def per_task(out: pd.DataFrame) -> pd.DataFrame:
    """Mean success and tokens per task (over its trajectories), tasks sorted."""
    return out.groupby("instance_id")[["success", "tokens", "unresolved"]].mean().sort_index()


def summarize(out: pd.DataFrame) -> PolicySummary:
    """Equal-weight mean over tasks of the per-task means (METHOD §8)."""
    tasks = per_task(out)
    return {
        "success": float(tasks["success"].mean()),
        "tokens": float(tasks["tokens"].mean()),
        "unresolved_stops": int(out["unresolved"].sum()),
        "trajectories": len(out),
        "tasks": len(tasks),
    }


def evaluate(df: pd.DataFrame, policies: Mapping[str, Policy]) -> dict[str, PolicySummary]:
    """Summaries of each policy on ordered points ``df``."""
    return {name: summarize(outcomes(df, policy(df))) for name, policy in policies.items()}


def upper_frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The success-cost frontier: (tokens, success) points not beaten at lower or equal cost."""
    best, out = -np.inf, []
    for tokens, success in sorted(points, key=lambda p: (p[0], -p[1])):
        if success > best:
            out.append((tokens, success))
            best = success
    return out
