"""Segments end to end on a real sandbox and a small trained policy: resuming from a segment
gives the same model bytes as never stopping, and the number of Ray workers changes nothing."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import torch
from taskfactory import CONFIG, make_calc_task

from editcredit.policy.base_training import train_base_model
from editcredit.rl.train_job import train_segment_job

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ARCH = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_layers": 1,
    "num_heads": 2,
    "num_kv_heads": 1,
    "max_positions": 512,
}


def _tasks():
    tasks = []
    for i in range(3):
        t = make_calc_task()
        tasks.append(t.model_copy(update={"instance_id": f"toy__calc__add_{i}", "split": "train"}))
    return tasks


@pytest.fixture(scope="module")
def base(tmp_path_factory, docker_sandbox):
    out = tmp_path_factory.mktemp("base") / "model"
    cfg = {
        "seed": 0,
        "tokenizer_vocab": 400,
        "architecture": ARCH,
        "experts": {"episodes_per_task": 4, "detour_prob": 0.8, "run_prob": 0.5},
        "sft": {
            "lr": 0.01,
            "batch_size": 8,
            "max_steps": 600,
            "max_seconds": 600,
            "warmup_steps": 5,
            "observation_loss_weight": 0.3,
        },
    }
    train_base_model(_tasks(), docker_sandbox, cfg, {"max_turns": 4}, out, torch.device("cpu"), 1)
    return out


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    from editcredit.data.freeze import write_parquet

    path = tmp_path_factory.mktemp("suite") / "tasks.parquet"
    write_parquet(_tasks(), path)
    return path


def _training(k: int, ray_workers: int | None) -> dict:
    training = copy.deepcopy(CONFIG["training"])
    training["segment_steps"] = k
    training["grpo"].update(tasks_per_step=2, group_size=3, micro_batch_size=4, lr=0.01)
    training["ray"] = (
        {"enabled": False, "address": "", "num_workers": 1}
        if ray_workers is None
        else {"enabled": True, "address": "", "num_workers": ray_workers}
    )
    return training


def _segment(run, step, previous, out, tasks_file, training):
    agent = {**CONFIG["agent"], "max_turns": 3, "max_new_tokens": 24}
    train_segment_job(
        run=run,
        step=step,
        previous=str(previous),
        tasks_path=str(tasks_file),
        controls_path=None,
        out_dir=str(out),
        training=training,
        agent=agent,
        reward=CONFIG["reward"],
        grading=CONFIG["grading"],
        sandbox=CONFIG["sandbox"],
        gpus=0,
        threads=1,
        config={"test": True},
        gate_dir=str(Path(out).parent / "gates"),
    )
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
    metrics = pd.read_parquet(whole / "metrics.parquet")
    assert metrics["step"].tolist() == [1, 2]
    assert (whole / "identity.json").is_file() and (whole / "segment.json").is_file()


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
