"""The typed records of the segment's seams hold exactly the keys their writers write: a rollout
worker's result (rows, queries, seconds), the credit ledger's and the metrics' rows, and each
Parquet schema's columns."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import torch

from editcredit.agent.trajectory import TRAJECTORY_SCHEMA, TrajectoryRow, write_trajectories
from editcredit.data.block_truth import TRUTH_SCHEMA
from editcredit.grading.grader import GradingReport
from editcredit.rl import rollout_worker
from editcredit.rl.records import (
    CREDIT_SCHEMA,
    METRICS_SCHEMA,
    ROLLOUT_SCHEMA,
    CfQuery,
    CreditLedgerRow,
    GroupResult,
    MetricsRow,
    PhaseSeconds,
    RolloutRow,
    TruthRow,
)
from editcredit.rl.rollout_worker import GroupJob, RolloutWorker
from editcredit.rl.segment import step_metrics
from editcredit.rl.step_batch import assemble_step


def keys(record) -> list[str]:
    return list(record.__annotations__)


def test_each_row_record_is_its_schemas_columns_in_order():
    assert keys(TrajectoryRow) == TRAJECTORY_SCHEMA.names
    assert keys(RolloutRow) == ROLLOUT_SCHEMA.names
    assert keys(CreditLedgerRow) == CREDIT_SCHEMA.names
    assert keys(TruthRow) == TRUTH_SCHEMA.names
    assert keys(MetricsRow) == METRICS_SCHEMA.names


def _report() -> GradingReport:
    return GradingReport(
        instance_id="t",
        patch_sha256="x",
        outcome="verdict",
        verdict="valid_0",
        resolved=0,
        reason="",
        Y=0,
        F=0.5,
        G=0,
        U=0.125,
    )


def _episode(key: str):
    env = SimpleNamespace(turns=[], end_reason="submit", final_patch=lambda: "")
    task = SimpleNamespace(instance_id="t", split="train", files={})
    return SimpleNamespace(
        rollout_key=key, task=task, env=env, token_ids=[1, 2], logprobs=[0.0, -0.5],
        loss_mask=[0, 1], turn_of_token=[-1, 0],
    )  # fmt: skip


def _worker() -> RolloutWorker:
    worker = RolloutWorker.__new__(RolloutWorker)
    worker.device = torch.device("cpu")
    worker.sandbox = worker.generator = worker.chat = worker.rollout = None
    worker.make_env = lambda sandbox: None
    worker.reward_cfg = {"format_penalty": -0.5, "regression_penalty": -0.25}
    worker.f_weight = worker.g_weight = 0.25
    return worker


def test_a_workers_group_result_holds_the_records_keys(monkeypatch, tmp_path):
    def episodes(jobs, *args, **kwargs):
        return [_episode(key) for _, key in jobs]

    monkeypatch.setattr(rollout_worker, "run_episodes", episodes)
    monkeypatch.setattr(rollout_worker, "grade_patch", lambda *args: _report())
    task = SimpleNamespace(instance_id="t", split="train", files=None)  # no planted truth
    result = _worker().run_group(GroupJob("M-s1", 3, task, 2, 7, True, 1.0))
    assert list(result) == keys(GroupResult)
    assert list(result["seconds"]) == keys(PhaseSeconds)
    assert [list(row) for row in result["rows"]] == [keys(RolloutRow)] * 2
    assert [list(query) for query in result["queries"]] == [keys(CfQuery)] * 2
    # the rows written as the rollouts file: its columns are the record's keys
    path = tmp_path / "rollouts.parquet"
    write_trajectories([{k: row[k] for k in keys(TrajectoryRow)} for row in result["rows"]], path)
    assert pq.read_schema(path).names == keys(TrajectoryRow)


def test_the_ledger_and_the_metrics_rows_hold_the_records_keys():
    rows = [
        {
            "rollout_key": f"r:1:a:{i}",
            "instance_id": "a",
            "step": 1,
            "reward": float(i),
            "masked": False,
            "loss_mask": [0, 1, 1],
            "turn_of_token": [-1, 0, 0],
            "Y": i,
            "format_error": 0,
            "p2p_regression": 0,
            "end_reason": "submit",
        }
        for i in range(2)
    ]
    queries = [
        {
            "rollout_key": row["rollout_key"],
            "selected_block": 0,
            "credited_turns": [0],
            "U_original": 1.0,
            "U_counterfactual": None if i else 0.5,
            "parts_original": [1.0, 1.0, 0.0],
            "parts_counterfactual": None if i else [0.0, 1.0, 0.0],
            "sent": True,
            "reason": "counterfactual report unavailable" if i else "",
            "cf_patch": "",
            "cf_report": "",
        }
        for i, row in enumerate(rows)
    ]
    credit = assemble_step(
        rows, queries, run="M-s1", arm="M", lam=0.1, c=1.0, normalize_std=False,
        zero_variance_filter=False,
    )  # fmt: skip
    assert [list(row) for row in credit.ledger] == [keys(CreditLedgerRow)] * 2
    update = {
        "entropy": 1.0, "grad_norm": 1.0, "loss": 0.0, "micro_batches": 1, "optimizer_steps": 1,
        "tv_masked_fraction": 0.0, "tokens": 4,
    }  # fmt: skip
    metrics = step_metrics("M-s1", 1, rows, credit, update, [], 10)
    assert list(metrics) == keys(MetricsRow)


def test_the_segment_receipt_holds_the_records_keys(tmp_path):
    from editcredit.rl.records import SegmentReceipt
    from editcredit.rl.segment import SegmentSpec, segment_receipt

    cfg = SimpleNamespace(arm="O", seed=1)
    spec = SegmentSpec("O-s1", 2, 2, tmp_path / "model", tmp_path / "state", tmp_path / "out")
    receipt = segment_receipt(spec, cfg, [], [{"alerts": "[]"}], 1, torch.device("cpu"))
    assert list(receipt) == sorted(SegmentReceipt.__required_keys__, key=keys(SegmentReceipt).index)
    # the keys the segment and the training job add are the record's optional keys
    src = Path(__file__).parents[2] / "src/editcredit"
    writers = [
        "rl/segment.py",
        "rl/train_job.py",
        "jobs/train_segment.py",
        "jobs/control_replay.py",
    ]
    sources = [(src / w).read_text() for w in writers if (src / w).exists()]
    added = {k for text in sources for k in re.findall(r'receipt\["(\w+)"\] =', text)}
    assert added and added <= SegmentReceipt.__optional_keys__
