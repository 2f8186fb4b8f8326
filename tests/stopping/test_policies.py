"""Fixed stop policies evaluated offline agree with a direct recount, table-driven."""

from __future__ import annotations

import pandas as pd
import pytest

from editcredit.stopping.policies import (
    evaluate,
    fixed_policies,
    ordered,
    outcomes,
    summarize,
    upper_frontier,
)

# One row per decision point: (trajectory, task, point, edits, run_after_last_edit, passed,
# failed, tokens, correct_now); the last point of each trajectory is its end.
POINTS = [
    ("t1", "A", 0, 1, 0, 0, 0, 10, 0),
    ("t1", "A", 1, 1, 1, 3, 1, 14, 0),
    ("t1", "A", 2, 2, 0, 3, 1, 20, 1),
    ("t1", "A", 3, 2, 1, 4, 0, 24, 1),
    ("t1", "A", 4, 2, 1, 4, 0, 25, 1),
    ("t2", "A", 0, 1, 0, 0, 0, 8, 1),
    ("t2", "A", 1, 2, 0, 0, 0, 30, 0),
    ("t3", "B", 0, 1, 1, 5, 0, 5, None),
    ("t3", "B", 1, 1, 1, 5, 0, 6, None),
    ("t4", "B", 0, 0, 0, 0, 0, 40, 0),  # no edit: only the end
]
# policy -> stop point per trajectory (t1, t2, t3, t4)
STOPS = {
    "agent_submit": [4, 1, 1, 0],
    "first_edit": [0, 0, 0, 0],
    "after_2_edits": [2, 1, 1, 0],
    "after_3_edits": [4, 1, 1, 0],
    "visible_pass": [3, 1, 0, 0],
    "visible_counts@0.5": [1, 1, 0, 0],
    "visible_counts@1": [3, 1, 0, 0],
}


def _frame(rows=POINTS) -> pd.DataFrame:
    df = pd.DataFrame(
        rows,
        columns=[
            "rollout_key",
            "instance_id",
            "point",
            "edits_so_far",
            "run_after_last_edit",
            "run_passed",
            "run_failed",
            "tokens_so_far",
            "correct_now",
        ],
    )
    df["model"], df["evalset"] = "base", "holdout"
    n = df.groupby("rollout_key")["point"].transform("max")
    df["is_end"] = df["point"] == n
    total = df["run_passed"] + df["run_failed"]
    df["run_pass_share"] = (df["run_passed"] / total.where(total > 0)).fillna(0.0)
    df["correct_now"] = df["correct_now"].astype("Int8")
    return ordered(df)


def recount(df: pd.DataFrame, stops: list[int]) -> dict[str, float]:
    """The direct recount: look up each trajectory's stop row by hand."""
    by_task: dict[str, list[tuple[int, float]]] = {}
    for key, point in zip(["t1", "t2", "t3", "t4"], stops, strict=True):
        row = df[(df["rollout_key"] == key) & (df["point"] == point)].iloc[0]
        ok = 1 if row["correct_now"] is not pd.NA and row["correct_now"] == 1 else 0
        by_task.setdefault(row["instance_id"], []).append((ok, float(row["tokens_so_far"])))
    succ = [sum(s for s, _ in v) / len(v) for v in by_task.values()]
    toks = [sum(t for _, t in v) / len(v) for v in by_task.values()]
    return {"success": sum(succ) / len(succ), "tokens": sum(toks) / len(toks)}


@pytest.mark.parametrize("name", sorted(STOPS))
def test_each_fixed_policy_stops_where_the_table_says_and_agrees_with_a_recount(name):
    df = _frame()
    policies = fixed_policies({"after_k_edits": [1, 2, 3], "visible_counts": [0.5, 1.0]})
    out = outcomes(df, policies[name](df)).set_index("trajectory")
    keys = [f"base|holdout|{k}" for k in ("t1", "t2", "t3", "t4")]
    assert out.loc[keys, "point"].tolist() == STOPS[name]
    got = evaluate(df, {name: policies[name]})[name]
    want = recount(df, STOPS[name])
    assert got["success"] == pytest.approx(want["success"])
    assert got["tokens"] == pytest.approx(want["tokens"])
    assert got["unresolved_stops"] == sum(
        1 for k, p in zip(["t1", "t2", "t3", "t4"], STOPS[name], strict=True) if k == "t3"
    )


def test_scores_weigh_tasks_equally():
    df = _frame()
    s = summarize(outcomes(df, df["is_end"].to_numpy()))
    # task A: (1 + 0) / 2; task B: (0 + 0) / 2 -> 0.25; tokens A (25+30)/2, B (6+40)/2
    assert s["success"] == pytest.approx(0.25)
    assert s["tokens"] == pytest.approx((27.5 + 23.0) / 2)
    assert s["tasks"] == 2 and s["trajectories"] == 4


def test_frontier_keeps_only_points_not_beaten_at_lower_cost():
    pts = [(10, 0.2), (12, 0.1), (15, 0.4), (15, 0.3), (20, 0.4), (30, 0.5)]
    assert upper_frontier(pts) == [(10, 0.2), (15, 0.4), (30, 0.5)]
