"""Configured comparisons from slot tables: hand cases, bounds, single-seed contrasts, the split,
the gate applied afterwards (its thresholds are parameters of the last stage only)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from editcredit.stats.comparisons import (
    ComparisonSpec,
    comparison_specs,
    evalset_scores_record,
    gated_record,
    paired_record,
)
from editcredit.stats.loaders import evalset_plan

PLAN = {"O": [42, 7], "B": [42, 7], "M": [42, 7], "E": [42]}
STATS = {
    "evalsets": ["holdout"],
    "comparisons": {
        "M-B": {"a": "M", "b": "B"},
        "M42-E42": {"a": "M", "b": "E", "seeds": [42]},
        "M-O-broad": {"a": "M", "b": "O", "evalset": "broad"},
    },
}
BOOT = {"n_resamples": 1000, "rng_seed": 20260927, "level": 0.95, "histogram_bins": 20}
RUNS = ("M-s42", "M-s7", "B-s42", "B-s7", "E-s42", "O-s42", "O-s7")
NONE_TRAINED = {run: set() for run in RUNS}


def slots(model: str, verdicts: dict[str, list]) -> pd.DataFrame:
    """One model's slot table: task -> verdict per sample (None = unresolved)."""
    rows = [
        {
            "model": model,
            "evalset": "holdout",
            "instance_id": t,
            "sample": s,
            "verdict": v,
            "state": "decided" if v is not None else "unresolved",
            "reason": "" if v is not None else "xfail",
            "attempts": 1,
        }
        for t, vs in verdicts.items()
        for s, v in enumerate(vs)
    ]
    frame = pd.DataFrame(rows)
    frame["verdict"] = frame["verdict"].astype("Int8")
    return frame


def test_specs_resolve_seeds_labels_and_evalsets():
    specs = comparison_specs(STATS, PLAN)
    assert specs["M-B"] == ComparisonSpec("M-B", "M", "B", (42, 7), "holdout")
    assert specs["M-B"].label == "M - B" and not specs["M-B"].single_seed
    assert specs["M42-E42"].label == "M42 - E42" and specs["M42-E42"].single_seed
    assert specs["M42-E42"].all_models == ["M-s42", "E-s42"]
    assert specs["M-O-broad"].evalset == "broad"


@pytest.mark.parametrize(
    "entry, match",
    [
        ({"a": "M", "b": "X"}, "arm 'X' is not in training.plan"),
        ({"a": "M", "b": "E", "seeds": [7]}, r"seed\(s\) \[7\] not trained for both M and E"),
        ({"a": "base", "b": "O"}, "the base goes second"),
        ({"a": "E", "b": "base", "seeds": [7]}, r"seed\(s\) \[7\] not trained for both E and base"),
    ],
)
def test_specs_name_the_bad_comparison(entry, match):
    with pytest.raises(ValueError, match=match):
        comparison_specs({"evalsets": ["holdout"], "comparisons": {"bad": entry}}, PLAN)


def test_an_arm_minus_the_base_pairs_each_seed_with_the_one_base():
    stats = {
        "evalsets": ["holdout"],
        "comparisons": {"O-base": {"a": "O", "b": "base"}, "E-base": {"a": "E", "b": "base"}},
    }
    specs = comparison_specs(stats, PLAN)
    spec = specs["O-base"]
    assert spec.seeds == (42, 7) and spec.label == "O - base"
    assert spec.all_models == ["O-s42", "O-s7", "base"] and spec.runs == ["O-s42", "O-s7"]
    assert specs["E-base"].label == "E42 - base" and specs["E-base"].runs == ["E-s42"]
    o = {"t1": [1, 1], "t2": [1, 0], "t3": [0, 1]}  # both seeds: 1.0, 0.5, 0.5
    base = {"t1": [1, 0], "t2": [0, 1], "t3": [0, 0]}  # 0.5, 0.5, 0.0
    tables = {"O-s42": slots("O-s42", o), "O-s7": slots("O-s7", o), "base": slots("base", base)}
    rec = paired_record(spec, tables, {"O-s42": {"t1"}, "O-s7": {"t1", "t3"}}, **BOOT)
    assert rec["all"]["task_differences"] == [0.5, 0.0, 0.5]
    assert rec["all"]["difference"] == pytest.approx(1 / 3)
    assert set(rec["scores"]) == {"O-s42", "O-s7", "base"}
    # trained by the arm's run of each seed: t1 at both seeds, t3 at seed 7 only
    assert rec["trained"]["n_cells"] == 3 and rec["untrained"]["n_cells"] == 3
    assert rec["partly_trained"]["n_cells"] == 0


def test_main_must_be_a_comparison():
    with pytest.raises(ValueError, match="stats.main: 'X-Y' is not a comparison"):
        comparison_specs({**STATS, "main": "X-Y"}, PLAN)


def test_same_inputs_same_record_to_the_last_digit():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    a = paired_record(spec, _two_seed_tables(), {r: {"t1"} for r in RUNS}, **BOOT)
    b = paired_record(spec, _two_seed_tables(), {r: {"t1"} for r in RUNS}, **BOOT)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _two_seed_tables(unresolved: bool = False) -> dict[str, pd.DataFrame]:
    # tasks t1..t3, n = 2 samples. M: 1.0, 0.5, 0.5 (both seeds); B: 0.5, 0.5, 0.0
    m = {"t1": [1, 1], "t2": [1, 0], "t3": [0, 1]}
    if unresolved:
        m = {**m, "t3": [0, None]}
    b = {"t1": [1, 0], "t2": [0, 1], "t3": [0, 0]}
    return {
        "M-s42": slots("M-s42", m),
        "M-s7": slots("M-s7", m),
        "B-s42": slots("B-s42", b),
        "B-s7": slots("B-s7", b),
    }


def test_paired_record_hand_case_and_split():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    rec = paired_record(spec, _two_seed_tables(), {r: {"t1"} for r in RUNS}, **BOOT)
    c = rec["all"]
    assert c["difference"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)
    assert c["task_differences"] == [0.5, 0.0, 0.5]
    assert c["sign"]["wins"] == 2 and c["sign"]["ties"] == 1 and c["sign"]["losses"] == 0
    assert c["ci_seed_task"]["scheme"] == "seed x task" and c["ci_task"] is not None
    assert c["primary_ci"] == c["ci_seed_task"]
    assert c["half_width"] == pytest.approx(
        (c["ci_seed_task"]["upper"] - c["ci_seed_task"]["lower"]) / 2
    )
    assert c["ci_task"]["half_width"] == pytest.approx(
        (c["ci_task"]["upper"] - c["ci_task"]["lower"]) / 2
    )
    trained = rec["trained"]
    assert trained["n_tasks"] == 1 and trained["n_cells"] == 2
    assert trained["comparison"]["difference"] == 0.5
    assert rec["untrained"]["n_tasks"] == 2 and rec["untrained"]["n_cells"] == 4
    assert rec["untrained"]["comparison"]["difference"] == pytest.approx(0.25)
    assert rec["partly_trained"]["n_cells"] == 0
    assert rec["scores"]["M-s42"]["score"] == pytest.approx(4 / 6)
    assert sum(rec["bootstrap_distribution"]["counts"]) == BOOT["n_resamples"]
    json.dumps(rec)  # JSON-ready


def test_empty_split_is_recorded_not_compared():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    rec = paired_record(spec, _two_seed_tables(), NONE_TRAINED, **BOOT)
    assert rec["trained"]["comparison"] is None
    assert rec["trained"]["note"] == "no tasks in this part"
    assert rec["trained"]["tasks_by_seed"] == {"42": 0, "7": 0}
    assert rec["untrained"]["comparison"]["difference"] == rec["all"]["difference"]


def test_split_is_per_seed_and_partly_trained_cells_are_in_neither_part():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    trained = {**NONE_TRAINED, "M-s42": {"t1", "t3"}, "B-s42": {"t1"}, "M-s7": {"t2"}}
    trained["B-s7"] = {"t2"}
    rec = paired_record(spec, _two_seed_tables(), trained, **BOOT)
    # seed 42: t1 trained by both, t3 by M only; seed 7: t2 trained by both
    assert rec["trained"]["tasks_by_seed"] == {"42": 1, "7": 1}
    assert rec["trained"]["n_tasks"] == 2
    # D: t1 = 0.5, t2 = 0.0 -> mean over seeds of per-seed means = 0.25
    assert rec["trained"]["comparison"]["difference"] == pytest.approx(0.25)
    assert rec["untrained"]["tasks_by_seed"] == {"42": 1, "7": 2}
    assert rec["partly_trained"] == {"n_cells": 1, "tasks_by_seed": {"42": 1, "7": 0}}


def test_a_compared_run_without_rollouts_is_an_error():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    trained = {r: set() for r in RUNS if r != "B-s7"}
    with pytest.raises(
        ValueError, match=r"comparison M-B: no training rollouts of run\(s\) \['B-s7'\]"
    ):
        paired_record(spec, _two_seed_tables(), trained, **BOOT)


def test_unresolved_gives_bounds_and_the_gate_fails():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    rec = paired_record(spec, _two_seed_tables(unresolved=True), NONE_TRAINED, **BOOT)
    c = rec["all"]
    assert c["difference"] is None and c["ci_seed_task"] is None and c["sign"] is None
    # M: t1 = 1, t2 = 0.5, t3 in [0, 0.5] -> M in [1/2, 2/3]; B = 1/3 -> difference [1/6, 1/3]
    assert c["difference_lower"] == pytest.approx(1 / 6)
    assert c["difference_upper"] == pytest.approx(1 / 3)
    assert rec["bootstrap_distribution"] is None
    assert rec["scores"]["M-s42"]["score"] is None
    assert rec["scores"]["M-s42"]["unresolved_by_reason"] == {"xfail": 1}
    gated = gated_record(rec, min_difference=-1.0, ci_lower_above=-1.0)
    assert gated["gate"]["verdict"] == "fail" and "unresolved" in gated["gate"]["line"]


def test_single_seed_contrast_is_labelled_and_uses_the_task_ci():
    spec = comparison_specs(STATS, PLAN)["M42-E42"]
    tables = {"M-s42": _two_seed_tables()["M-s42"], "E-s42": _two_seed_tables()["B-s42"]}
    rec = paired_record(spec, tables, NONE_TRAINED, **BOOT)
    assert rec["kind"] == "single-seed contrast" and rec["label"] == "M42 - E42"
    assert rec["all"]["ci_seed_task"] is None
    assert rec["all"]["primary_ci"] == rec["all"]["ci_task"]
    assert rec["bootstrap_distribution"]["scheme"] == "task (seeds fixed)"


def test_gate_thresholds_apply_only_in_the_last_stage():
    spec = comparison_specs(STATS, PLAN)["M-B"]
    rec = paired_record(spec, _two_seed_tables(), NONE_TRAINED, **BOOT)
    ci_lower = rec["all"]["primary_ci"]["lower"]
    low = gated_record(rec, min_difference=0.04, ci_lower_above=ci_lower - 1e-6)
    high = gated_record(rec, min_difference=0.5, ci_lower_above=ci_lower - 1e-6)
    assert low["gate"]["verdict"] == "pass" and high["gate"]["verdict"] == "fail"
    assert not high["gate"]["difference_ok"] and high["gate"]["ci_ok"]
    assert {k: v for k, v in low.items() if k != "gate"} == rec
    assert low["gate"]["line"].startswith("claim gate M - B: PASS")


def test_planned_samples_count_missing_rows_as_unresolved():
    frame = slots("base", {"t1": [1], "t2": [0, 1]})  # t1 lacks its sample 1
    assert evalset_plan([frame]) == (("t1", "t2"), 2)
    rec = evalset_scores_record("holdout", {"base": frame}, n_samples=2)
    s = rec["models"]["base"]
    assert s["n_planned"] == 4 and s["n_known"] == 3 and s["n_missing_rows"] == 1
    assert (s["lower"], s["upper"]) == (0.5, 0.75) and s["score"] is None
    with pytest.raises(ValueError, match="n = 1 is planned"):
        evalset_plan([frame], n_samples=1)


def test_scores_from_parquet_round_trip(tmp_path):
    from editcredit.stats.loaders import read_slots

    path = tmp_path / "slots.parquet"
    slots("base", {"t1": [1, None], "t2": [0, 0]}).to_parquet(path)
    frame = read_slots(path)
    assert frame["verdict"].isna().sum() == 1
    rec = evalset_scores_record("holdout", {"base": frame})
    assert rec["models"]["base"]["lower"] == 0.25 and rec["models"]["base"]["upper"] == 0.5
    assert np.isclose(rec["n_samples"], 2)


@pytest.mark.parametrize("unresolved", [False, True])
def test_the_written_records_are_their_typed_records(unresolved):
    """Each record of results/stats/ has the keys of its TypedDict in the written order, nested
    records too, before and after the JSON round trip the gate job reads it through."""
    from record_shapes import assert_record

    from editcredit.stats._records import to_plain
    from editcredit.stats.records import EvalsetScores, GatedRecord, PairedRecord

    spec = comparison_specs(STATS, PLAN)["M-B"]
    trained = {"M-s42": {"t1"}, "B-s42": {"t1", "t2"}, "M-s7": {"t2"}, "B-s7": {"t2"}}
    rec = paired_record(spec, _two_seed_tables(unresolved), trained, **BOOT)
    assert_record(rec, PairedRecord)
    assert rec["trained"]["comparison"] is not None
    written = json.loads(json.dumps(to_plain(rec)))
    assert_record(written, PairedRecord)
    gated = gated_record(written, min_difference=0.0, ci_lower_above=0.0)
    assert_record(gated, GatedRecord)
    assert list(gated) == [*PairedRecord.__annotations__, "gate"]
    single = comparison_specs(STATS, PLAN)["M42-E42"]
    tables = {"M-s42": _two_seed_tables()["M-s42"], "E-s42": _two_seed_tables()["B-s42"]}
    assert_record(paired_record(single, tables, NONE_TRAINED, **BOOT), PairedRecord)
    scores = evalset_scores_record("holdout", _two_seed_tables(unresolved))
    assert_record(scores, EvalsetScores)
