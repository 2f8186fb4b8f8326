"""Rule strata's job on the fake results tree: the record read back from its files, and the
paper's table, with the multi-bug stratum and the truth control present or absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fake_results import PLAN, FakeSpec, run_names, write_fake_tree

from editcredit.io.provenance import read_provenance
from editcredit.jobs.strata import strata_job
from editcredit.report.strata import strata_tex
from editcredit.stats.strata import strata_specs

BOOT = {"n_resamples": 1000, "rng_seed": 20260927, "level": 0.95}
CONFIG = {"stats": {"bootstrap": BOOT}}
TASKS = "data/frozen/minibugs/tasks.parquet"


def run_job(root: Path, spec: FakeSpec, controls=None) -> tuple[dict, str]:
    specs = strata_specs({a: s for a, s in spec.plan.items() if a != "T"}, controls)
    models = list(dict.fromkeys(m for s in specs for m in s.all_models))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        record = strata_job(
            [s.to_dict() for s in specs],
            [f"results/eval/{m}/holdout/slots.parquet" for m in models],
            TASKS,
            "results/stats/strata.json",
            "paper/tables/strata.tex",
            evalset="holdout",
            bootstrap=BOOT,
            config=CONFIG,
            n_samples=spec.n_samples,
        )
    finally:
        os.chdir(cwd)
    assert read_provenance(root / "paper" / "tables" / "strata.tex")["inputs"]
    written = json.loads((root / "results" / "stats" / "strata.json").read_text())
    assert written.pop("provenance")["inputs"]
    assert written == json.loads(json.dumps(record))
    return written, (root / "paper" / "tables" / "strata.tex").read_text()


def test_both_strata_and_no_truth_control(tmp_path):
    spec = write_fake_tree(tmp_path, FakeSpec(n_eval_tasks=40, n_in_pool=6))
    record, tex = run_job(tmp_path, spec)
    # every fourth of the 40 held-out tasks plants two bugs; the 6 pool tasks one
    assert [(s["stratum"], s["n_tasks"]) for s in record["strata"]] == [
        ("single", 36),
        ("multi", 10),
    ]
    mb = record["comparisons"][0]
    assert mb["label"] == "M - B" and not mb["control"] and mb["seeds"] == [42, 314159]
    all_, single, multi = mb["strata"]
    assert all_["n_tasks"] == 46 and single["present"] and multi["present"]
    assert all_["comparison"]["mdd"] > 0 and all_["comparison"]["se_scheme"] == "seed x task"
    assert record["comparisons"][2]["absent"] == "training.controls plans no T"
    assert r"\label{tab:strata}" in tex
    assert (
        r"T $-$ O \emph{(control)} & \multicolumn{7}{l}{\emph{absent: "
        r"training.controls plans no T}}" in tex
    )
    assert r"& 2+ bugs & 2${\times}$10 &" in tex
    assert tex.startswith("% editcredit-provenance: {")


def test_a_single_bug_suite_marks_the_multi_bug_stratum_absent(tmp_path):
    spec = write_fake_tree(tmp_path, FakeSpec())
    path = tmp_path / TASKS
    table = pq.read_table(path).drop(["bugs"])  # a single-bug suite has no bugs column
    pq.write_table(table, path)
    record, tex = run_job(tmp_path, spec)
    assert [s["n_tasks"] for s in record["strata"]] == [46, 0]
    for entry in record["comparisons"][:2]:
        multi = entry["strata"][2]
        assert not multi["present"] and multi["comparison"] is None
    assert r"& 2+ bugs & \multicolumn{6}{l}{\emph{absent: no task with 2+ bugs}} \\" in tex


def test_the_truth_control_beside_o(tmp_path):
    spec = write_fake_tree(tmp_path, FakeSpec(plan={**PLAN, "T": [42, 314159]}))
    assert "T-s42" in run_names(spec)
    record, tex = run_job(tmp_path, spec, controls={"T": [42, 314159]})
    control = record["comparisons"][2]
    assert control["label"] == "T - O" and control["control"] and control["absent"] == ""
    assert all(p["comparison"]["resolved"] for p in control["strata"])
    assert r"T $-$ O \emph{(control)} & all & 2${\times}$46 &" in tex


def test_the_table_of_an_unresolved_stratum_shows_bounds(tmp_path):
    spec = write_fake_tree(tmp_path, FakeSpec(unresolved=3))
    record, tex = run_job(tmp_path, spec)
    assert not record["comparisons"][0]["strata"][0]["comparison"]["resolved"]
    assert r"$^\dagger$ & --- & --- & --- & --- \\" in strata_tex(record)


@pytest.mark.parametrize("bugs", [[None, None], ["[{}, {}]", None]])
def test_a_planned_task_without_a_record_is_an_error(tmp_path, bugs):
    spec = write_fake_tree(tmp_path, FakeSpec())
    pq.write_table(pa.table({"instance_id": ["x", "y"], "bugs": bugs}), tmp_path / TASKS)
    with pytest.raises(ValueError, match="no task record for 46 task"):
        run_job(tmp_path, spec)
