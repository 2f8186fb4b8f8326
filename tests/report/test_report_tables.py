"""Tables rendered from a fake results tree: numbers equal the JSON results, bounds when
unresolved, single-seed contrasts labelled, provenance first lines, costs from benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from editcredit.report.latex import ci_points, points, read_tex_provenance
from editcredit.report.tables import TABLES


def _json(root: Path, rel: str) -> dict:
    return json.loads((root / rel).read_text())


def _tex(root: Path, name: str) -> str:
    return (root / "paper" / "tables" / f"{name}.tex").read_text()


def test_every_table_has_a_provenance_first_line(resolved_tree):
    root = resolved_tree["root"]
    for name in TABLES:
        block = read_tex_provenance(root / "paper" / "tables" / f"{name}.tex")
        assert block["config_sha256"] and block["inputs"], name
    block = read_tex_provenance(root / "paper" / "tables" / "comparisons.tex")
    assert set(block["inputs"]) == {f"results/stats/{n}.json" for n in resolved_tree["comparisons"]}


def test_comparison_numbers_equal_the_json(resolved_tree):
    root = resolved_tree["root"]
    table, findings = _tex(root, "comparisons"), _tex(root, "findings")
    for name in resolved_tree["comparisons"]:
        rec = _json(root, f"results/stats/{name}.json")
        c = rec["all"]
        diff = points(c["difference"], sign=True)
        assert diff in table and diff in findings
        assert ci_points(c["ci_task"], half=True) in table
        assert c["ci_task"]["half_width"] > 0 and c["half_width"] > 0
        assert "$\\pm$" + points(c["ci_task"]["half_width"]) in table
        assert "$\\pm$" + points(c["primary_ci"]["half_width"]) in findings
        s = c["sign"]
        assert f"{s['wins']}/{s['losses']}/{s['ties']}" in table
        assert rec["gate"]["verdict"].upper() in table
        if not rec["single_seed"]:
            assert ci_points(c["ci_seed_task"], half=True) in table
    m42 = _json(root, "results/stats/M42-E42.json")
    assert m42["kind"] == "single-seed contrast" and m42["all"]["ci_seed_task"] is None
    assert "single-seed contrast (seed 42)" in table
    assert "M42 $-$ E42" in table


def test_trained_and_untrained_parts_equal_the_json(resolved_tree):
    root, spec = resolved_tree["root"], resolved_tree["spec"]
    table = _tex(root, "trained")
    for name in resolved_tree["comparisons"]:
        rec = _json(root, f"results/stats/{name}.json")
        # the fake runs train on every training task; the eval set holds n_in_pool of them
        assert rec["trained"]["n_tasks"] == spec.n_in_pool
        assert rec["untrained"]["n_tasks"] == spec.n_eval_tasks
        assert rec["partly_trained"]["n_cells"] == 0
        for part in ("trained", "untrained"):
            c = rec[part]["comparison"]
            assert c["n_cells"] == rec[part]["n_tasks"] * len(rec["seeds"])
            assert points(c["difference"], sign=True) in table
            assert ci_points(c["ci"], half=True) in table
            assert c["half_width"] == c["ci"]["half_width"] > 0
            assert f"{c['wins']}/{c['losses']}/{c['ties']}" in table
    assert "M42 $-$ E42" in table and "& trained & 42: 6, 314159: 6 &" in table


def test_unresolved_slots_are_listed_by_name(unresolved_tree, resolved_tree):
    root = unresolved_tree["root"]
    table = _tex(root, "unresolved")
    assert table.count("missing\\_observation") == 5 * 2  # 5 slots of each M run
    assert "error: test\\_a.py::test\\_x; skipped: test\\_a.py::test\\_y" in table
    assert r"M-s42 & holdout & \texttt{minibugs\_\_mod\_\_holdout\_000} & 0 &" in table
    block = read_tex_provenance(root / "paper" / "tables" / "unresolved.tex")
    assert "results/eval/M-s42/holdout/slots.parquet" in block["inputs"]
    clean = _tex(resolved_tree["root"], "unresolved")
    assert "no slot is" in clean and "longtable" not in clean


def test_unresolved_context_orders_and_fills():
    from editcredit.report.context import unresolved_context

    rows = [
        {"model": "M-s1", "evalset": "h", "instance_id": "b", "sample": 0, "verdict": None},
        {
            "model": "base",
            "evalset": "h",
            "instance_id": "z",
            "sample": 1,
            "verdict": None,
            "reason": "infra_after_patch",
            "detail": "sandbox died",
        },
        {"model": "base", "evalset": "h", "instance_id": "a", "sample": 0, "verdict": 1},
    ]
    out = unresolved_context(rows, ["base", "M-s1"])
    assert [(r["model"], r["instance_id"]) for r in out] == [("base", "z"), ("M-s1", "b")]
    assert out[0]["detail"] == "sandbox died" and out[1]["reason"] == "unknown"
    assert out[1]["detail"] == ""


def test_numbers_file_defines_the_quoted_numbers(resolved_tree):
    root = resolved_tree["root"]
    numbers = _tex(root, "numbers")
    rec = _json(root, "results/stats/M-B.json")
    diff = points(rec["all"]["difference"], sign=True)
    assert "\\@namedef{ecn@main.difference}{" + diff + "}" in numbers
    assert "\\@namedef{ecn@main.gate}{" + rec["gate"]["verdict"].upper() + "}" in numbers
    assert "\\@namedef{ecn@gate.min}{4.00}" in numbers
    assert "\\@namedef{ecn@boot.resamples}{2\\,000}" in numbers
    assert "\\@namedef{ecn@cfg.lambda}{0.1}" in numbers
    assert "\\@namedef{ecn@cfg.pool}{" in numbers
    assert "\\@namedef{ecn@cfg.pool.chosen}{" in numbers


def test_scores_table_shows_scores(resolved_tree):
    root = resolved_tree["root"]
    table = _tex(root, "scores")
    scores = _json(root, "results/stats/scores/holdout.json")
    for s in scores["models"].values():
        assert s["resolved"]
        assert f"& {points(s['score'])} &" in table
    assert "dagger$ &" not in table


def test_unresolved_slots_show_bounds_and_fail_the_gate(unresolved_tree):
    root = unresolved_tree["root"]
    table, findings, scores_tex = (_tex(root, n) for n in ("comparisons", "findings", "scores"))
    for name in unresolved_tree["comparisons"]:
        rec = _json(root, f"results/stats/{name}.json")
        c = rec["all"]
        assert not c["resolved"] and c["difference"] is None and c["primary_ci"] is None
        assert rec["gate"]["verdict"] == "fail" and rec["bootstrap_distribution"] is None
        lo, hi = (points(c[k], sign=True) for k in ("difference_lower", "difference_upper"))
        bounds = f"[{lo}, {hi}]"
        assert bounds + "$^\\dagger$" in table
        assert bounds in findings
    assert "unresolved slots remain" in findings
    scores = _json(root, "results/stats/scores/holdout.json")
    m = scores["models"]["M-s42"]
    assert m["score"] is None and m["unresolved_by_reason"] == {"missing_observation": 5}
    assert f"[{points(m['lower'])}, {points(m['upper'])}]$^\\dagger$" in scores_tex
    assert "missing\\_observation 5" in scores_tex


def test_training_tables(resolved_tree):
    root = resolved_tree["root"]
    health, failures, encounter = (
        _tex(root, n) for n in ("training_health", "training_failures", "encounter")
    )
    rec = _json(root, "results/stats/training/M.json")
    h = rec["health"]
    assert f"M & 2 & 4 & {h['cf_sent']} &" in health
    assert "O & 2 & 4 & 0 & --- &" in health  # arm O sends no CF queries
    assert "cf\\_unavailable\\_streak" in health
    assert failures.count("\\addlinespace") == len(resolved_tree["spec"].plan) - 1
    enc = rec["encounter"][0]
    assert enc["n_tasks"] > 0
    assert points(enc["mean_difference"], sign=True) in encounter
    assert ci_points(enc["ci"], half=True) in encounter and enc["ci"]["half_width"] > 0
    assert rec["encounter"][-1]["k"] == "last" and "\nM & last &" in encounter
    credit, c = _tex(root, "credit"), rec["credit"]
    assert f"M & {c['queries']} & {c['available']} & {c['positive']} & {c['negative']} &" in credit
    ledger = pd.concat(
        pd.read_parquet(p) for p in sorted(root.glob("runs/M-s*/step_*/credit.parquet"))
    )
    live = ledger[ledger["available"]]
    recount = (len(ledger), len(live), int((live["D"] > 0).sum()), int((live["D"] < 0).sum()))
    assert (c["queries"], c["available"], c["positive"], c["negative"]) == recount
    both = ((live["dY"] != 0) & (live["dG"] != 0)).sum()
    assert c["moved_by_both"] == both and c["scale_capped"] == (live["s"] < 1).sum()
    assert "\nO & 0 & 0 & 0 & 0 & 0 & 0 &" in credit  # arm O queries nothing


def test_audits_and_costs(resolved_tree):
    root = resolved_tree["root"]
    audits, costs = _tex(root, "audits"), _tex(root, "costs")
    assert audits.count("& ok &") == 2 * 7  # 7 runs x 2 segment ends
    assert "\\texttt{train\\_segment} & 7 &" in costs
    assert "Total & 10 &" in costs
    # GPU seconds = wall seconds x GPUs requested (train_segment: 1 GPU in this test)
    assert "& 94.5 & 87.5 & 94.5 &" in costs
    # phase seconds and time spent from the endpoint segments' volatile sidecars: per run
    # (4 steps) 1.5 s rollout, 0.5 s counterfactual (B, M), 0.25 s update a step
    assert "\nM & 2 & " in costs and "& 12.0 & 4.0 & 2.0 \\\\" in costs
    assert "& 6.0 & 0.0 & 1.0 \\\\" in costs  # arm E: one run, no counterfactuals
    assert costs.count("& 50 / $\\infty$ &") == 7  # 12.5 s a step, no wall-time cap
    block = read_tex_provenance(root / "paper" / "tables" / "costs.tex")
    assert "runs/M-s42/step_4/segment.volatile.json" in block["inputs"]
    assert not any(p.endswith(".volatile.json") for p in _inputs(root, "numbers"))


def _inputs(root: Path, name: str) -> dict:
    return read_tex_provenance(root / "paper" / "tables" / f"{name}.tex")["inputs"]


def test_declared_audit_exclusions_are_listed_under_the_audit_table():
    from editcredit.report.context import audit_exclusions, audits_context
    from editcredit.report.latex import make_env, render_template

    def audit(keys):
        body = {"ok": True, "vs_base": {"compared_tensors": 2, "changed_tensors": 1}}
        return body | {
            "excluded": [{"pattern": "model.vision_*", "reason": "text only", "keys": keys}]
        }

    audits = {("M-s1", 2): audit(["a", "b"]), ("M-s1", 4): audit(["a", "b", "c"])}
    assert audit_exclusions(audits) == [
        {"pattern": "model.vision_*", "reason": "text only", "tensors": 3}
    ]
    assert audit_exclusions({("M-s1", 2): {"ok": True}}) == []
    rows = audits_context(audits, ["M-s1"])
    assert [r["excluded"] for r in rows] == [2, 3]
    env = make_env(Path(__file__).resolve().parents[2] / "paper" / "templates")
    tex = render_template(env, "audits.tex.j2", rows=rows, exclusions=audit_exclusions(audits))
    assert r"\texttt{model.vision\_*} (3 tensors): text only" in tex
    bare = render_template(env, "audits.tex.j2", rows=rows, exclusions=[])
    assert "Declared exclusions" not in bare


def test_reproducibility_states_the_replay_check(resolved_tree):
    root = resolved_tree["root"]
    text = " ".join(_tex(root, "replay").split())
    assert "of the 212 gradings the training runs stored (160 final patches, 52" in text
    assert "a sample of 20 chosen by the SHA256" in text
    assert "20 of 20 gave the stored verdict and per-test statuses again" in text
    assert "not replayable: 22 empty patches (graded without a run))" in text
    block = read_tex_provenance(root / "paper" / "tables" / "replay.tex")
    assert set(block["inputs"]) == {"results/replay/summary.json"}


def test_the_records_read_and_the_rows_built_are_their_typed_records(resolved_tree):
    """The statistics' JSON files the tables read hold the keys of their TypedDicts (sorted, as
    write_result_json writes them), and each context's rows have the keys of its row record in
    its order."""
    from record_shapes import assert_record

    from editcredit.report import context as ctx
    from editcredit.stats.records import EvalsetScores, GatedRecord, TrainingRecord

    root = resolved_tree["root"]
    comparisons = [_json(root, f"results/stats/{n}.json") for n in resolved_tree["comparisons"]]
    training = [_json(root, p) for p in sorted(root.glob("results/stats/training/*.json"))]
    scores = _json(root, "results/stats/scores/holdout.json")
    assert comparisons and training
    for rec in comparisons:
        rec.pop("provenance", None)
        assert_record(rec, GatedRecord, ordered=False)
    for rec in training:
        rec.pop("provenance", None)
        assert_record(rec, TrainingRecord, ordered=False)
    scores.pop("provenance", None)
    assert_record(scores, EvalsetScores, ordered=False)
    built = {
        ctx.ComparisonGroup: ctx.comparisons_context(comparisons),
        ctx.FailureGroup: ctx.failures_context(training),
        ctx.ScoreGroup: ctx.scores_context([scores], ["O", "B", "M", "E"]),
    }
    for row_record, rows_built in built.items():
        assert all(list(r) == list(row_record.__annotations__) for r in rows_built)
        assert_record(rows_built, list[row_record], ordered=False)  # nested parts as read
    main_keys = list(ctx.ComparisonRow.__annotations__)
    assert all(list(g["main"]) == main_keys for g in built[ctx.ComparisonGroup])
    for group in ctx.trained_context(comparisons):
        full = [p for p in group["parts"] if not p["empty"]]
        assert full and all(list(p) == list(ctx.PartRow.__annotations__) for p in full)
    replay = ctx.replay_context(_json(root, "results/replay/summary.json"))
    assert list(replay) == list(ctx.ReplayRow.__annotations__)
    rows = ctx.unresolved_context(
        [{"model": "M-s42", "evalset": "holdout", "instance_id": "t", "sample": 0, "verdict": None}]
    )
    assert_record(rows, list[ctx.UnresolvedRow])
