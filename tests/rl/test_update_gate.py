"""The early update gate (METHOD §5): each of the first three updates of a run of an arm with
counterfactual credit is checked as soon as it is taken (credit rows reached the loss, finite
loss and gradients, parameters moved), whatever the segment length; a failed one stops the run
at once with a receipt under the gate directory and leaves no checkpoint."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from jobfactory import run_segment
from policyfactory import tiny_qwen2, toy_tasks
from record_shapes import assert_record
from taskfactory import CONFIG

from editcredit.rl import segment as seg
from editcredit.rl.config import TrainConfig
from editcredit.rl.gates import (
    EARLY_UPDATES,
    FirstSegmentGate,
    UpdateCheck,
    UpdateGateFailed,
    UpdateGateFailure,
    UpdateGateRecord,
    first_segment_gate,
    gated_update,
    update_check,
)
from editcredit.rl.segment import SegmentSpec, StepRecords
from editcredit.rl.step_callbacks import segment_callbacks
from editcredit.settings import HealthSettings


def _metrics(credit_rollouts=4, loss=0.1, grad_norm=0.5, cf_nonzero=3) -> dict:
    return {
        "credit_rollouts": credit_rollouts,
        "cf_nonzero": cf_nonzero,
        "loss": loss,
        "grad_norm": grad_norm,
        "alerts": "[]",
    }


@pytest.mark.parametrize(
    ("metrics", "moved", "failed"),
    [
        (_metrics(), 3, []),
        (_metrics(credit_rollouts=0), 3, ["credit_reached_loss"]),
        (_metrics(credit_rollouts=0, cf_nonzero=1), 3, ["credit_reached_loss"]),
        (_metrics(credit_rollouts=0, cf_nonzero=0), 3, []),  # every D zero: nothing to deliver
        (_metrics(loss=math.nan), 3, ["finite_loss_and_gradients"]),
        (_metrics(grad_norm=math.inf), 3, ["finite_loss_and_gradients"]),
        (_metrics(), 0, ["parameters_moved"]),
        (
            _metrics(credit_rollouts=0, loss=math.inf),
            0,
            list(update_check(1, _metrics(), 1)["checks"]),
        ),
    ],
)
def test_update_check_names_each_failed_check(metrics, moved, failed):
    check = update_check(2, metrics, moved)
    assert_record(check, UpdateCheck)
    assert sorted(k for k, ok in check["checks"].items() if not ok) == sorted(failed)
    assert check["passed"] is (not failed)
    assert check["step"] == 2 and check["moved_tensors"] == moved


@pytest.mark.parametrize(
    ("arm", "step", "gated"),
    [("M", 1, True), ("B", 3, True), ("M", 4, False), ("B", 0, False), ("O", 1, False)],
)
def test_the_first_three_updates_of_the_cf_arms_are_gated(arm, step, gated):
    assert EARLY_UPDATES == 3
    assert gated_update(arm, step) is gated


def test_the_first_segment_gate_carries_the_early_updates():
    rows = [{"instance_id": "t", "masked": False}]
    ok = first_segment_gate("M", rows, [_metrics()], 2, [update_check(1, _metrics(), 2)])
    assert ok["passed"] and ok["checks"]["early_updates"]
    bad = first_segment_gate("M", rows, [_metrics()], 2, [update_check(1, _metrics(), 0)])
    assert not bad["passed"] and not bad["checks"]["early_updates"]
    assert "early_updates" not in first_segment_gate("O", rows, [_metrics()], 2)["checks"]


@pytest.fixture
def base(tmp_path):
    out = tmp_path / "base"
    tiny_qwen2().save_pretrained(str(out))
    return out


class FakeSteps:
    """Stands in for ``train_step``: moves the parameters (or not) and reports chosen metrics."""

    def __init__(self, plan: dict[int, tuple[dict, bool]]):
        self.plan, self.steps = plan, []

    def __call__(self, spec, step, trainer, by_id, cfg, workers, log=print):
        self.steps.append(step)
        metrics, move = self.plan.get(step, (_metrics(), True))
        if move:
            with torch.no_grad():
                next(trainer.model.parameters()).add_(0.01)
        return StepRecords([{"instance_id": "t", "masked": False}], [], metrics)


def _run(monkeypatch, base, tmp_path, arm, start_step, steps, plan, fake=None):
    """One segment with ``train_step`` faked; (the fake, the receipt, the saved directories)."""
    fake = fake or FakeSteps(plan)
    saved = []
    monkeypatch.setattr(seg, "train_step", fake)
    monkeypatch.setattr(seg, "save_segment", lambda out_dir, *a: saved.append(out_dir))
    cfg = TrainConfig.from_dict(
        {**CONFIG["training"]["grpo"], "temperature": 1.0, "arm": arm, "seed": 1}
    )
    spec = SegmentSpec("run", start_step, steps, base, None, tmp_path / "out")
    receipt = seg.train_segment(
        spec,
        cfg,
        toy_tasks(1),
        None,
        HealthSettings.from_mapping(CONFIG["training"]["health"]),
        torch.device("cpu"),
        callbacks=segment_callbacks(spec, cfg),
    )
    return fake, receipt, saved


@pytest.mark.parametrize("bad_step", [1, 2, 3])
def test_a_bad_early_update_stops_a_long_segment_at_once(monkeypatch, base, tmp_path, bad_step):
    fake = FakeSteps({bad_step: (_metrics(credit_rollouts=0), True)})
    with pytest.raises(UpdateGateFailed, match=f"update {bad_step} failed") as err:
        _run(monkeypatch, base, tmp_path, "M", 0, 10, {}, fake)
    assert fake.steps == list(range(1, bad_step + 1))  # not after the segment's tenth step
    record = err.value.record
    assert_record(record, UpdateGateFailure)
    assert record["failed_step"] == bad_step
    assert [u["step"] for u in record["update_gate"]["updates"]] == list(range(1, bad_step + 1))
    assert record["update_gate"]["passed"] is False
    assert not record["update_gate"]["updates"][-1]["checks"]["credit_reached_loss"]


def test_an_update_that_moves_nothing_fails_though_the_segment_moved(monkeypatch, base, tmp_path):
    """Step 2 leaves the parameters as step 1 left them: the segment as a whole changed."""
    with pytest.raises(UpdateGateFailed, match="update 2 failed") as err:
        _run(monkeypatch, base, tmp_path, "B", 0, 10, {2: (_metrics(), False)})
    check = err.value.record["update_gate"]["updates"][-1]
    assert check["moved_tensors"] == 0 and not check["checks"]["parameters_moved"]


def test_good_early_updates_are_a_receipt_in_the_segments_they_fall_in(monkeypatch, base, tmp_path):
    fake, receipt, saved = _run(monkeypatch, base, tmp_path, "M", 0, 10, {})
    assert fake.steps == list(range(1, 11)) and saved == [tmp_path / "out"]
    gate = receipt["update_gate"]
    assert_record(gate, UpdateGateRecord)
    assert_record(receipt["first_segment_gate"], FirstSegmentGate)
    assert gate["passed"] and [u["step"] for u in gate["updates"]] == [1, 2, 3]
    assert receipt["first_segment_gate"]["checks"]["early_updates"]
    # a segment of two steps: the first holds updates 1 and 2, the next one update 3
    _, first, _ = _run(monkeypatch, base, tmp_path, "M", 0, 2, {})
    assert [u["step"] for u in first["update_gate"]["updates"]] == [1, 2]
    _, later, _ = _run(monkeypatch, base, tmp_path, "M", 2, 2, {})
    assert [u["step"] for u in later["update_gate"]["updates"]] == [3]
    _, beyond, _ = _run(monkeypatch, base, tmp_path, "M", 4, 2, {4 + 1: (_metrics(0), False)})
    assert "update_gate" not in beyond  # update 5 is not gated


def test_a_bad_update_of_a_later_short_segment_still_stops(monkeypatch, base, tmp_path):
    with pytest.raises(UpdateGateFailed, match="update 3 failed"):
        _run(monkeypatch, base, tmp_path, "B", 2, 1, {3: (_metrics(grad_norm=math.nan), True)})


def test_arm_o_is_not_gated_per_update(monkeypatch, base, tmp_path):
    fake, receipt, _ = _run(monkeypatch, base, tmp_path, "O", 0, 3, {1: (_metrics(0), True)})
    assert fake.steps == [1, 2, 3] and "update_gate" not in receipt


def test_the_job_writes_the_gate_receipt_and_no_checkpoint(monkeypatch, base, tmp_path):
    from editcredit.data.freeze import write_parquet
    from editcredit.rl import train_job

    class Workers:
        closed = False

        def close(self):
            self.closed = True

        def describe(self):
            return {"kind": "fake"}

    workers = Workers()
    monkeypatch.setattr(train_job, "make_workers", lambda *a, **k: workers)
    monkeypatch.setattr(seg, "train_step", FakeSteps({1: (_metrics(), False)}))
    tasks = tmp_path / "tasks.parquet"
    write_parquet(toy_tasks(2), tasks)
    out = tmp_path / "runs" / "M-s42" / "step_10"
    gates = str(tmp_path / "gates")
    with pytest.raises(train_job.GateFailed, match="update 1 failed") as err:
        run_segment("M-s42", 10, base, out, tasks, {"training.segment_steps": 10}, gate_dir=gates)
    assert workers.closed and not out.exists()
    (receipt,) = (tmp_path / "gates").glob("M-s42-*.json")
    assert str(receipt) in str(err.value)
    record = json.loads(receipt.read_text())
    assert record["failed_step"] == 1 and record["run"] == "M-s42"
    assert record["update_gate"]["updates"][0]["checks"]["parameters_moved"] is False
    assert Path(receipt).parent == tmp_path / "gates"
