"""Segments end to end on a real sandbox and a small trained policy: resuming from a segment
gives the same model bytes as never stopping, and the number of Ray workers changes nothing;
every step's edit blocks carry their known truth (``truth.parquet``), which the credit-vs-truth
diagnostics read."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from jobfactory import TOY_SEGMENT, run_segment
from policyfactory import toy_tasks
from taskfactory import CONFIG
from test_truth_rows import recounted_labels

from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.data.block_truth import TRUTH_SCHEMA
from editcredit.grading.grader_identity import grader_identity
from editcredit.records import CreditReason
from editcredit.rl.scalars import read_scalars
from editcredit.stats.credit_truth import PLACEMENT, credit_truth

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _training(k: int, ray_workers: int | None, processes: int = 1) -> dict:
    """Config overrides: segments of ``k`` steps; Ray with ``ray_workers`` workers, or
    ``processes`` local workers without it (one: in-process)."""
    return {
        **TOY_SEGMENT,
        "training.segment_steps": k,
        "training.ray.enabled": ray_workers is not None,
        "training.ray.num_workers": processes if ray_workers is None else ray_workers,
    }


def _segment(run, step, previous, out, tasks_file, training):
    run_segment(run, step, previous, out, tasks_file, training)
    return Path(out)


def _bytes(step_dir: Path) -> bytes:
    return (step_dir / "model" / "model.safetensors").read_bytes()


def test_two_segments_of_k_give_the_bytes_of_one_segment_of_2k(base, tasks_file, tmp_path):
    whole = _segment("M-s42", 2, base, tmp_path / "a" / "step_2", tasks_file, _training(2, None))
    one = _segment("M-s42", 1, base, tmp_path / "b" / "step_1", tasks_file, _training(1, None))
    two = _segment("M-s42", 2, one, tmp_path / "b" / "step_2", tasks_file, _training(1, None))
    assert _bytes(whole) == _bytes(two)
    assert _bytes(whole) != (base / "model.safetensors").read_bytes()
    straight = pd.read_parquet(whole / "rollouts.parquet")
    resumed = pd.concat([pd.read_parquet(d / "rollouts.parquet") for d in (one, two)])
    assert straight["token_ids"].map(list).tolist() == resumed["token_ids"].map(list).tolist()
    truth = [pd.read_parquet(d / "truth.parquet") for d in (one, two)]
    pd.testing.assert_frame_equal(
        pd.read_parquet(whole / "truth.parquet"), pd.concat(truth, ignore_index=True)
    )
    metrics = pd.read_parquet(whole / "metrics.parquet")
    assert metrics["step"].tolist() == [1, 2]
    assert (whole / "identity.json").is_file() and (whole / "segment.json").is_file()
    live = read_scalars(whole.parent / "tensorboard")  # the run's TensorBoard sidecar
    assert [s for s, _ in live["reward/pass_rate"]] == [1, 2]
    assert [v for _, v in live["reward/pass_rate"]] == pytest.approx(metrics["pass_rate"].tolist())
    assert [s for s, _ in live["policy/entropy"]] == [1, 2]
    grader = grader_identity(CONFIG["sandbox"])  # every segment names the grader it used
    for segment in (whole, one, two):
        assert json.loads((segment / "segment.json").read_text())["grader"] == grader


def test_results_do_not_depend_on_the_number_of_ray_workers(base, tasks_file, tmp_path):
    outs = [
        _segment("B-s7", 1, base, tmp_path / f"w{n}" / "step_1", tasks_file, _training(1, n))
        for n in (1, 2)
    ]
    assert _bytes(outs[0]) == _bytes(outs[1])
    frames = [pd.read_parquet(o / "rollouts.parquet") for o in outs]
    assert frames[0]["token_ids"].map(list).tolist() == frames[1]["token_ids"].map(list).tolist()
    assert frames[0]["logprobs"].map(list).tolist() == frames[1]["logprobs"].map(list).tolist()
    credit = [pd.read_parquet(o / "credit.parquet") for o in outs]
    pd.testing.assert_frame_equal(credit[0], credit[1])


def test_local_worker_processes_give_the_in_process_results(base, tasks_file, tmp_path):
    outs = [
        _segment("M-s5", 1, base, tmp_path / f"p{n}" / "step_1", tasks_file, _training(1, None, n))
        for n in (1, 2)
    ]
    assert _bytes(outs[0]) == _bytes(outs[1])
    frames = [pd.read_parquet(o / "rollouts.parquet") for o in outs]
    assert frames[0]["token_ids"].map(list).tolist() == frames[1]["token_ids"].map(list).tolist()
    pd.testing.assert_frame_equal(*[pd.read_parquet(o / "credit.parquet") for o in outs])


def test_ray_and_local_worker_processes_give_the_same_results(base, tasks_file, tmp_path):
    """The CPU default's local worker processes stand in for Ray's actors (docs/ray.md): two
    of each give the same model, rollouts and credit."""
    outs = [
        _segment("M-s9", 1, base, tmp_path / name / "step_1", tasks_file, training)
        for name, training in (("ray", _training(1, 2)), ("local", _training(1, None, 2)))
    ]
    assert _bytes(outs[0]) == _bytes(outs[1])
    frames = [pd.read_parquet(o / "rollouts.parquet") for o in outs]
    assert frames[0]["token_ids"].map(list).tolist() == frames[1]["token_ids"].map(list).tolist()
    assert frames[0]["logprobs"].map(list).tolist() == frames[1]["logprobs"].map(list).tolist()
    pd.testing.assert_frame_equal(*[pd.read_parquet(o / "credit.parquet") for o in outs])
    kinds = [json.loads((o / "segment.json").read_text())["workers"] for o in outs]
    assert kinds == [{"kind": "ray", "workers": 2}, {"kind": "processes", "workers": 2}]


def test_a_rebuilt_segment_writes_the_same_rollouts_and_credit_bytes(base, tasks_file, tmp_path):
    """Deleting a segment and building it again gives the same bytes: the stored reports carry
    no wall time, sentinel names or pytest durations (``grading.stored_report``)."""
    outs = [
        _segment("M-s42", 1, base, tmp_path / name / "step_1", tasks_file, _training(1, None))
        for name in ("first", "again")
    ]
    assert _bytes(outs[0]) == _bytes(outs[1])
    for name in ("rollouts.parquet", "credit.parquet", "truth.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    reports = pd.read_parquet(outs[0] / "rollouts.parquet")["report"]
    assert reports.str.contains("<sentinel:must_fail>").all()  # graded runs, normalized
    # the clock's and the disk's facts are in the sidecar, and only there (docs/design.md)
    for name in ("metrics.parquet", "segment.json", "identity.json"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    timings = [json.loads((o / "segment.volatile.json").read_text()) for o in outs]
    assert [s["step"] for s in timings[0]["steps"]] == [1]
    assert timings[0]["run_seconds"]["seconds_rollout"] > 0
    assert timings[0]["storage"]["free_bytes"] > 0
    assert "seconds_rollout" not in pd.read_parquet(outs[0] / "metrics.parquet").columns


def test_a_segment_writes_the_truth_of_its_blocks_that_the_diagnostics_read(
    base, tasks_file, tmp_path
):
    """truth.parquet: a row per labelled block of every rollout, its labels the ones recounted
    on the side from the task records and the rollout rows; read against the ledger."""
    out = _segment("M-s42", 1, base, tmp_path / "step_1", tasks_file, _training(1, None))
    truth = pd.read_parquet(out / "truth.parquet")
    assert pq.read_schema(out / "truth.parquet").names == TRUTH_SCHEMA.names
    rollouts = pd.read_parquet(out / "rollouts.parquet")
    by_id = {t.instance_id: t for t in toy_tasks()}
    agent = CONFIG["agent"]
    replay = MinibugsEnv(
        None, 10**6, agent["numbered_lines"], agent["candidates"], agent["try_scope"]
    )  # replays the edits: no sandbox
    blocks = 0
    for row in rollouts.to_dict("records"):
        labels = recounted_labels(by_id[row["instance_id"]], row, replay)
        mine = truth[truth["rollout_key"] == row["rollout_key"]]
        assert dict(zip(mine["block"], mine["label"], strict=True)) == labels
        blocks += len(json.loads(row["edit_blocks"]))
    assert len(truth) == blocks > 0  # every block of the toy task's inline tree is labelled
    assert set(truth["run"]) == {"M-s42"} and set(truth["step"]) == {1}
    ledger = pd.read_parquet(out / "credit.parquet")
    result = credit_truth(ledger, truth, PLACEMENT["M"])
    counted = sum(sum(signs.values()) for signs in result["table"].values())
    live = ledger[ledger["available"] & (ledger["reason"] != CreditReason.NOT_QUERIED.value)]
    assert counted + result["unlabelled"] == len(live)
