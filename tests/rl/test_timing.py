"""A segment's volatile facts: the sidecar carries the run's time spent and phase seconds from
segment to segment, and the receipt keeps only what a rebuild reproduces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editcredit.io.volatile import write_volatile
from editcredit.rl.segment import SegmentSpec, segment_receipt
from editcredit.rl.timing import PHASES, segment_volatile, step_seconds
from editcredit.rl.train_job import (
    earlier_run_seconds,
    run_budget_guard,
    run_seconds,
    stable_workers,
)


def _previous(tmp_path: Path, sidecar: dict | None) -> Path:
    """A finished segment ``step_1`` whose receipt holds a budget ledger."""
    seg = tmp_path / "runs" / "M-s1" / "step_1"
    seg.mkdir(parents=True)
    ledger = {"scope": "M-s1", "budget": {}, "spent": {"steps": 1.0, "tokens": 50.0}}
    (seg / "segment.json").write_text(json.dumps({"budget": {**ledger, "infra_failures": 2}}))
    if sidecar is not None:
        write_volatile(seg / "segment.json", sidecar)
    return seg


def test_the_run_budget_takes_its_time_spent_from_the_previous_sidecar(tmp_path):
    seg = _previous(tmp_path, {"budget_spent": {"wall_seconds": 30.0, "gpu_hours": 0.5}})
    guard = run_budget_guard("M-s1", {"wall_seconds": 100}, str(seg), 1, str(tmp_path / "b"))
    assert guard.spent["wall_seconds"] == 30.0 and guard.spent["gpu_hours"] == 0.5
    assert guard.spent["tokens"] == 50.0 and guard.infra_failures == 2


def test_a_previous_segment_without_its_sidecar_is_named(tmp_path):
    seg = _previous(tmp_path, None)
    with pytest.raises(ValueError, match=r"step_1/segment\.volatile\.json.*missing"):
        run_budget_guard("M-s1", None, str(seg), 0, str(tmp_path / "b"))
    with pytest.raises(ValueError, match=r"segment\.volatile\.json"):
        earlier_run_seconds(str(seg))


def test_phase_seconds_add_up_over_the_run(tmp_path):
    earlier = {"seconds_rollout": 4.0, "seconds_counterfactual": 1.0, "seconds_update": 0.5}
    seg = _previous(tmp_path, {"run_seconds": earlier})
    steps = [step_seconds({"rollout": 1.0, "grading": 0.5, "counterfactual": 0.25, "update": 2.0})]
    assert steps[0] == {
        "seconds_rollout": 1.5,
        "seconds_counterfactual": 0.25,
        "seconds_update": 2.0,
    }
    assert run_seconds(earlier_run_seconds(str(seg)), steps) == {
        "seconds_rollout": 5.5,
        "seconds_counterfactual": 1.25,
        "seconds_update": 2.5,
    }
    assert run_seconds(earlier_run_seconds(None), steps) == steps[0]  # the run's first segment
    write_volatile(seg / "segment.json", {"run_seconds": {"seconds_rollout": 1.0}})
    with pytest.raises(ValueError, match="no run_seconds"):
        earlier_run_seconds(str(seg))


def test_the_receipt_keeps_the_workers_kind_and_number_and_no_clock():
    ray = {
        "kind": "ray",
        "address": "10.0.0.1:6379",
        "actor_nodes": ["a1", "b2"],
        "actor_groups": [1, 3],
    }
    assert stable_workers(ray) == {"kind": "ray", "workers": 2}
    assert stable_workers({"kind": "processes", "workers": 3}) == {
        "kind": "processes",
        "workers": 3,
    }
    assert stable_workers({"kind": "in_process"}) == {"kind": "in_process"}
    from record_shapes import assert_record

    from editcredit.rl.records import StableWorkers

    for described in (ray, {"kind": "processes", "workers": 3}, {"kind": "in_process"}):
        assert_record(stable_workers(described), StableWorkers)


def test_the_segment_receipt_holds_no_seconds_and_the_sidecar_holds_them(tmp_path):
    import torch
    from taskfactory import CONFIG

    from editcredit.protocol.budget import Budget, BudgetGuard
    from editcredit.rl.config import TrainConfig

    cfg = TrainConfig.from_dict(
        {**CONFIG["training"]["grpo"], "temperature": 1.0, "arm": "O", "seed": 1}
    )
    spec = SegmentSpec("O-s1", 2, 2, tmp_path / "model", tmp_path / "state", tmp_path / "out")
    guard = BudgetGuard("O-s1", Budget.from_mapping({"wall_seconds": 10}), gpus=1)
    guard.add({"tokens": 5, "gradings": 2, "wall_seconds": 3.6})
    metrics = [{"alerts": "[]"}, {"alerts": "[]"}]
    receipt = segment_receipt(spec, cfg, [], metrics, 1, torch.device("cpu"), guard)
    assert set(receipt["budget"]["spent"]) == {"steps", "tokens", "gradings"}
    assert not [k for k in receipt if "second" in k]
    seconds = [dict.fromkeys(PHASES, 1.0), dict.fromkeys(PHASES, 2.0)]
    volatile = segment_volatile(spec, seconds, started=0.0, budget=guard)
    assert [s["step"] for s in volatile["steps"]] == [3, 4]
    assert volatile["budget_spent"] == {"wall_seconds": 3.6, "gpu_hours": 0.001}
    assert volatile["seconds"] > 0
