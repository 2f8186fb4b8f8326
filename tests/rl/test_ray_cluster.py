"""Rollout workers on an existing Ray cluster, reached by address (training.ray.address).

The cluster is a real one started with the Ray CLI in a subprocess (``ray start --head``, two
CPUs, its own temp dir, no dashboard); the workers are the real RolloutWorker actors with a tiny
untrained policy and the local sandbox. The head runs with ``--block`` in a process group of its
own, and teardown ends that group: ``ray stop`` would end every Ray process on the machine,
other people's included.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from taskfactory import CONFIG, make_calc_task

from editcredit.rl.rollout_worker import GroupJob
from editcredit.rl.workers import (
    InProcessWorkers,
    ProcessWorkers,
    RayWorkers,
    actor_device,
    make_workers,
)

HEAD_CPUS = 2


@pytest.mark.parametrize(
    "device, address, gpus, expected",
    [
        ("cpu", "", 0, "cpu"),
        ("cuda", "", 0, "cuda"),  # a local instance shares the job's GPU
        ("cuda", "head:6379", 0, "cpu"),  # a cluster node need not have a GPU
        ("cpu", "head:6379", 1, "cuda"),  # a reserved GPU is the actor's own
        ("cuda", "", 0.5, "cuda"),
    ],
)
def test_actor_device(device, address, gpus, expected):
    assert actor_device(device, address, gpus) == expected


def test_disabled_ray_gives_local_workers(monkeypatch):
    made = []
    monkeypatch.setattr(InProcessWorkers, "__init__", lambda self, kw: made.append(kw))
    monkeypatch.setattr(ProcessWorkers, "__init__", lambda self, n, kw: made.append((n, kw)))
    pool = make_workers({"enabled": False, "address": "x:1", "num_workers": 1}, {"k": 1})
    assert isinstance(pool, InProcessWorkers) and made == [{"k": 1}]
    pool = make_workers({"enabled": False, "address": "x:1", "num_workers": 4}, {"k": 1})
    assert isinstance(pool, ProcessWorkers) and made[1] == (4, {"k": 1})
    # each local pool describes itself as WorkersDescription says
    from record_shapes import assert_record

    from editcredit.rl.workers import WorkersDescription

    pool.procs = [None] * 4
    assert_record(pool.describe(), WorkersDescription)
    assert pool.describe() == {"kind": "processes", "workers": 4}
    one = make_workers({"enabled": False, "address": "x:1", "num_workers": 1}, {"k": 1})
    assert_record(one.describe(), WorkersDescription)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop_group(proc: subprocess.Popen) -> None:
    """End the process group of our ``ray start --block``: its GCS, raylet and workers take
    SIGTERM; the leader keeps looping after they end, so the group then gets SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(10)


@pytest.fixture(scope="module")
def ray_cluster():
    """A one-node Ray cluster started with the CLI; yields its address."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    ray_bin = Path(sys.executable).with_name("ray")
    temp = tempfile.mkdtemp(prefix="ecray-", dir="/tmp")  # short: Ray puts sockets under it
    port = _free_port()
    log_path = Path(temp) / "head.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [
                str(ray_bin),
                "start",
                "--head",
                "--block",
                f"--port={port}",
                f"--num-cpus={HEAD_CPUS}",
                "--num-gpus=0",
                "--include-dashboard=false",
                "--disable-usage-stats",
                "--object-store-memory=200000000",
                f"--temp-dir={temp}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )
    try:
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in log_path.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not come up:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield {"address": f"127.0.0.1:{port}", "port": port, "proc": proc}
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _stop_group(proc)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    """An untrained Qwen2 policy with the chat tokenizer (seconds to make)."""
    from editcredit.policy.chat import ChatTemplate
    from editcredit.policy.model import new_model, tiny_config
    from editcredit.policy.tokenizer import train_tokenizer

    out = tmp_path_factory.mktemp("tiny") / "model"
    texts = ["def add(a, b):\n    return a + b\n", "edit calc.py add\nrun\nsubmit\n"] * 4
    tokenizer = train_tokenizer(texts, 300)
    chat = ChatTemplate(tokenizer)
    arch = {
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_layers": 1,
        "num_heads": 2,
        "num_kv_heads": 1,
        "max_positions": 512,
    }
    model = new_model(
        tiny_config(len(tokenizer), arch, chat.pad, chat.bos, chat.end_of_turn), seed=0
    )
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    return out


@pytest.mark.slow
def test_make_workers_runs_rollout_actors_on_the_cluster(ray_cluster, tiny_policy):
    import ray

    ray_cfg = {"enabled": True, "address": ray_cluster["address"], "num_workers": 2}
    worker_kwargs = {
        "model_dir": str(tiny_policy),
        "agent_cfg": {
            **CONFIG["agent"],
            "max_turns": 1,
            "max_new_tokens": 4,
            "max_context_tokens": 512,
            "temperature": 1.0,
        },
        "reward_cfg": CONFIG["reward"],
        "grading_cfg": CONFIG["grading"],
        "sandbox_cfg": {**CONFIG["sandbox"], "backend": "local"},
        "threads": 1,
        "device": "cpu",
    }
    pool = make_workers(ray_cfg, worker_kwargs)
    try:
        assert isinstance(pool, RayWorkers) and len(pool.actors) == 2
        # connected to the external cluster, not to a fresh local instance
        gcs = ray.get_runtime_context().gcs_address
        assert gcs.endswith(f":{ray_cluster['port']}"), gcs
        nodes = [n for n in ray.nodes() if n["Alive"]]
        assert len(nodes) == 1 and nodes[0]["Resources"]["CPU"] == HEAD_CPUS
        assert ray.cluster_resources()["CPU"] == HEAD_CPUS
        # the actors live on that node and do the work
        on = {
            ray.get(a.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))
            for a in pool.actors
        }
        assert on == {nodes[0]["NodeID"]}
        task = make_calc_task()
        tasks = [task.model_copy(update={"instance_id": f"calc_{i}"}) for i in range(2)]
        jobs = [GroupJob("M-s42", 1, t, 2, i, False, 1.0) for i, t in enumerate(tasks)]
        results = pool.run_groups(jobs)
        assert [len(r["rows"]) for r in results] == [2, 2]
        assert [r["rows"][0]["instance_id"] for r in results] == ["calc_0", "calc_1"]
    finally:
        pool.close()
    # closing disconnects the driver and leaves the cluster running
    assert not ray.is_initialized()
    assert ray_cluster["proc"].poll() is None
