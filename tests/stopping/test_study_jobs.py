"""The stop study's fit and sealed evaluation end to end on a synthetic checkpoints file:
learned models fit on the fit split only, the sealed labels come through the seal, the gate is
recorded once, and every fixed policy's numbers agree with a direct recount."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.protocol.seal import freeze_protocol, seal_path
from editcredit.protocol.spec import ProtocolError
from editcredit.stopping.build import CHECKPOINTS_SCHEMA
from editcredit.stopping.jobs import stop_eval_job, stop_policies_job
from editcredit.stopping.points import FEATURES

REPO = Path(__file__).resolve().parents[2]


def synthetic_rows(seed: int = 0) -> list[dict]:
    """Trajectories whose last visible run predicts 'correct now' (noisily)."""
    rng = np.random.default_rng(seed)
    rows = []
    for split, n_tasks in (("dev", 12), ("train", 8), ("holdout", 10)):
        for t in range(n_tasks):
            for sample in range(2):
                n = int(rng.integers(1, 5))
                good_from = int(rng.integers(0, n + 1))
                tokens = 0
                final_ok = int(good_from < n)
                for point in range(n):
                    tokens += int(rng.integers(5, 30))
                    ok = int(point >= good_from)
                    ran = int(rng.random() < 0.7)
                    feats = dict.fromkeys(FEATURES, 0)
                    feats.update(
                        turn=point,
                        tokens_so_far=tokens,
                        edits_so_far=point + 1,
                        blocks_so_far=point + 1,
                        run_seen=ran,
                        run_after_last_edit=ran,
                        run_passed=3 + ok if ran else 0,
                        run_failed=(1 - ok) if ran else 0,
                        run_pass_share=((3 + ok) / 4 if ran else 0.0),
                        patch_lines=2,
                        block_logprob_mean=float(-rng.random()),
                        block_logprob_min=float(-1 - rng.random()),
                        block_tokens=5,
                    )
                    rows.append(
                        {
                            "model": "base",
                            "evalset": "holdout" if split == "holdout" else "broad",
                            "instance_id": f"{split}{t}",
                            "sample": sample,
                            "rollout_key": f"{split}{t}-{sample}",
                            "split": split,
                            "point": point,
                            "n_points": n,
                            "is_end": point == n - 1,
                            "block_end": True,
                            "end_reason": "submit",
                            "tree_sha256": f"{split}{t}-{ok}",
                            "patch_sha256": "x",
                            **feats,
                            "correct_now": ok,
                            "verdict_now": "valid_1" if ok else "valid_0",
                            "correct_end": final_ok,
                        }
                    )
    return rows


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    protocol = Path("config/protocols/stop.yaml")
    protocol.parent.mkdir(parents=True)
    shutil.copy(REPO / "config/protocols/stop.yaml", protocol)
    ckpt = Path("results/stop/base/checkpoints.parquet")
    ckpt.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(synthetic_rows(), schema=CHECKPOINTS_SCHEMA), ckpt)
    receipt = Path("logs/protocols/stop.json")
    freeze_protocol(protocol, receipt, "logs/seals")
    return {"protocol": str(protocol), "receipt": str(receipt), "ckpt": str(ckpt)}


def _fit(s):
    return stop_policies_job(
        checkpoints=[s["ckpt"]],
        protocol=s["protocol"],
        receipt=s["receipt"],
        out_scores="results/stop/scores.parquet",
        out_policies="results/stop/policies.json",
        config={"test": 1},
    )


def _eval(s):
    return stop_eval_job(
        checkpoints=[s["ckpt"]],
        scores="results/stop/scores.parquet",
        policies_json="results/stop/policies.json",
        protocol=s["protocol"],
        receipt=s["receipt"],
        out="results/stop/eval.json",
        config={"test": 1},
        seal_dir="logs/seals",
    )


def recount(rows, split_names, rule) -> tuple[float, float]:
    """Direct recount: walk each trajectory, stop at the first point the rule marks (or end)."""
    by_traj: dict[str, list[dict]] = {}
    for r in rows:
        if r["split"] in split_names:
            by_traj.setdefault(r["rollout_key"], []).append(r)
    per_task: dict[str, list[tuple[int, int]]] = {}
    for pts in by_traj.values():
        pts.sort(key=lambda r: r["point"])
        stop = next((p for p in pts if rule(p) or p["is_end"]), pts[-1])
        per_task.setdefault(stop["instance_id"], []).append(
            (int(stop["correct_now"] == 1), stop["tokens_so_far"])
        )
    succ = [np.mean([s for s, _ in v]) for v in per_task.values()]
    toks = [np.mean([t for _, t in v]) for v in per_task.values()]
    return float(np.mean(succ)), float(np.mean(toks))


RULES = {
    "agent_submit": lambda p: p["is_end"],
    "first_edit": lambda p: p["edits_so_far"] >= 1,
    "after_2_edits": lambda p: p["edits_so_far"] >= 2,
    "after_3_edits": lambda p: p["edits_so_far"] >= 3,
    "visible_pass": lambda p: (
        p["run_after_last_edit"] == 1 and p["run_failed"] == 0 and p["run_passed"] > 0
    ),
    "visible_counts@0.75": lambda p: p["run_after_last_edit"] == 1 and p["run_pass_share"] >= 0.75,
}


def test_fit_and_sealed_evaluation_agree_with_a_direct_recount(study):
    fitted = _fit(study)
    assert not seal_path("stop", "logs/seals").exists()  # fitting read no sealed label
    assert set(fitted["models"]) == {"logistic", "boosted_trees", "two_head"}
    result = _eval(study)
    rows = pq.read_table(study["ckpt"]).to_pylist()
    for name, rule in RULES.items():
        for split, names in (("fit", {"dev", "train"}), ("sealed", {"holdout"})):
            success, tokens = recount(rows, names, rule)
            got = result[split][name]
            assert got["success"] == pytest.approx(success), (name, split)
            assert got["tokens"] == pytest.approx(tokens), (name, split)
    assert result["gate"]["verdict"] in ("pass", "fail")
    assert result["gate"]["candidate"].startswith("two_head@")
    assert "vs_fixed" in result["sealed"]["logistic@0.5"]
    seal = json.loads(seal_path("stop", "logs/seals").read_text())
    assert seal["protocol_sha256"] == result["protocol_sha256"]
    # the same evaluation again: the gate record is reused, byte for byte
    record = Path(result["gate"]["record"])
    before = record.read_bytes()
    _eval(study)
    assert record.read_bytes() == before
    assert [p.name for p in Path("logs/seals").glob("stop.gate.*.json")] == [record.name]


def test_a_recorded_gate_is_never_rewritten(study):
    _fit(study)
    first = _eval(study)["gate"]
    path = Path(first["record"])
    before = path.read_bytes()
    # the same sealed labels and fit choice, a different recomputation: refused, naming it
    policies = Path("results/stop/policies.json")
    fitted = json.loads(policies.read_text())
    other = "two_head@w=0.3" if first["candidate"] != "two_head@w=0.3" else "two_head@w=0"
    fitted["gate_choice"]["baseline"] = "first_edit"
    fitted["gate_choice"]["candidate"] = other
    policies.write_text(json.dumps(fitted))
    key_changed = _eval(study)["gate"]  # another choice is another evaluation: its own record
    assert key_changed["record"] != first["record"] and path.read_bytes() == before
    record = json.loads(path.read_text())
    record["record"]["difference"] = 0.123  # as if the first evaluation had given another number
    path.write_text(json.dumps(record))
    policies.write_text(json.dumps({**fitted, "gate_choice": first_choice(study)}))
    with pytest.raises(ProtocolError, match="applied once") as err:
        _eval(study)
    assert str(path) in str(err.value)


def first_choice(study):
    return stop_policies_job(
        checkpoints=[study["ckpt"]],
        protocol=study["protocol"],
        receipt=study["receipt"],
        out_scores="results/stop/scores.parquet",
        out_policies="results/stop/policies.json",
        config={"test": 1},
    )["gate_choice"]


def test_editing_the_protocol_after_the_sealed_read_is_refused(study):
    _fit(study)
    _eval(study)
    p = Path(study["protocol"])
    p.write_text(p.read_text().replace("max_cost_ratio: 0.9", "max_cost_ratio: 0.8"))
    with pytest.raises(ProtocolError, match="logs/seals/stop.json"):
        freeze_protocol(p, study["receipt"], "logs/seals")
    with pytest.raises(ProtocolError, match="changed after it was frozen"):
        _fit(study)


def test_the_fit_loader_holds_no_sealed_label(study):
    from editcredit.protocol.spec import load_protocol
    from editcredit.stopping.jobs import load_visible

    df = load_visible([study["ckpt"]], load_protocol(study["protocol"])["splits"])
    sealed = df[df["role"] == "sealed"]
    assert len(sealed) > 0 and sealed["correct_now"].isna().all()
    assert sealed["correct_end"].isna().all() and sealed["verdict_now"].isna().all()
    assert df.loc[df["role"] == "fit", "correct_now"].notna().all()


def test_a_higher_threshold_never_stops_earlier(study):
    from editcredit.protocol.spec import load_protocol
    from editcredit.stopping.jobs import load_visible
    from editcredit.stopping.learned import fit_model, score_points, threshold_policy
    from editcredit.stopping.policies import ordered, outcomes

    spec = load_protocol(study["protocol"])
    df = ordered(load_visible([study["ckpt"]], spec["splits"]))
    fit = df[df["role"] == "fit"]
    model = fit_model("logistic", fit, spec["features"], spec["grid"])
    df = df.join(score_points(df, {"logistic": model}, spec["features"]))
    # the visible run predicts the label in this data: P rises with the pass share
    ran = df[df["run_seen"] == 1].groupby("run_pass_share")["logistic"].mean()
    assert len(ran) == 2 and ran.is_monotonic_increasing and ran.iloc[1] > 0.8 > 0.2 > ran.iloc[0]
    points = [
        outcomes(df, threshold_policy("logistic", t)(df))["point"].to_numpy()
        for t in spec["grid"]["thresholds"]
    ]
    for lower, higher in itertools.pairwise(points):
        assert (higher >= lower).all()


def test_checkpoint_trees_are_held_to_the_recorded_gold_times(tmp_path):
    """The stop study grades as the evaluation grades a final patch: the control rule's gold
    times set the limits (no gold run of its own), through the memo and the report store."""
    from taskfactory import CONFIG, make_calc_task

    from editcredit.sandbox.limits import GoldTimes, GoldTimesBook, per_test_limits
    from editcredit.sandbox.memo import GradingMemo
    from editcredit.stopping.build import _graded_pool

    task = make_calc_task()
    times = GoldTimes(0.5, {"test_calc.py::test_add": 0.02})
    book = GoldTimesBook({task.instance_id: times})
    sandbox = {**CONFIG["sandbox"], "backend": "local", "workers": 1}
    pool = _graded_pool(sandbox, book)
    try:
        assert isinstance(pool, GradingMemo)
        limits = per_test_limits(times, pool.sandbox._all[0].limit_settings, 1.0)
        assert pool.limits_for(task) == limits
    finally:
        pool.close()


def test_the_stop_records_are_their_typed_records(study):
    """The policy tables, curves, gate choice and gate verdict the stop jobs write have the keys
    of their TypedDicts (editcredit.stopping.records), in their order."""
    from record_shapes import assert_record

    from editcredit.stopping.jobs import StopEval, StopPolicies
    from editcredit.stopping.records import (
        CurvePoint,
        GateChoice,
        PolicyRow,
        StopGateVerdict,
        VsFixed,
    )

    def row_keys(row):
        return [k for k in PolicyRow.__annotations__ if k != "vs_fixed" or "vs_fixed" in row]

    fitted = _fit(study)
    result = _eval(study)
    tables = [fitted["fit"], result["sealed"], fitted["gate_choice"]["fit"]]
    assert all(list(row) == row_keys(row) for table in tables for row in table.values())
    assert any("vs_fixed" in row for row in result["sealed"].values())
    for row in result["sealed"].values():
        if "vs_fixed" in row:
            assert_record(row["vs_fixed"], VsFixed)
    assert_record(fitted["fit_curve"], list[CurvePoint])
    assert_record(result["sealed_curve"], list[CurvePoint])
    assert list(fitted["gate_choice"]) == list(GateChoice.__annotations__)
    # the records the jobs return, as built, and the files they write (sorted keys)
    assert_record(fitted, StopPolicies)
    # the eval's fit and gate choice are policies.json's as read back (sorted keys)
    assert_record(result, StopEval, ordered=False)
    for path, record in [
        ("results/stop/policies.json", StopPolicies),
        ("results/stop/eval.json", StopEval),
    ]:
        written = json.loads(Path(path).read_text())
        written.pop("provenance")  # write_result_json's block beside the record
        assert_record(written, record, ordered=False)
    # the gate as recorded once (sorted keys): the verdict plus where and when it was applied
    assert set(StopGateVerdict.__annotations__) < set(result["gate"])
