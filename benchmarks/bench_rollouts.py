"""Rollouts per second of the default (generation, environment, grading), split by phase.

Uses the trained base policy (models/base/tiny) on the first train tasks of the frozen suite,
through the docker sandbox pool, with the config's agent budgets. Usage::

    python benchmarks/bench_rollouts.py [--tasks 16] [--samples 8]

Writes benchmarks/out/rollouts.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

import torch

from editcredit.agent.environments import environment_factory
from editcredit.agent.probe import rollout_and_grade
from editcredit.agent.probe_job import load_policy
from editcredit.agent.rollout import RolloutConfig
from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parents[1]


class Timed:
    """Wraps an object's method and sums the wall time spent in it (thread-safe)."""

    def __init__(self, obj, method: str) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._lock = threading.Lock()
        inner = getattr(obj, method)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                with self._lock:
                    self.seconds += time.perf_counter() - start
                    self.calls += 1

        setattr(obj, method, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--model", default="tiny")
    args = parser.parse_args()
    torch.set_num_threads(2)
    config = load_config(ROOT / "config" / "config.yaml")
    tasks = [
        t for t in load_tasks(ROOT / "data/frozen/minibugs/tasks.parquet") if t.split == "train"
    ][: args.tasks]
    generator, chat = load_policy(str(ROOT / "models/base" / args.model), torch.device("cpu"))
    gen_timer = Timed(generator, "generate")
    sandbox_cfg = config["sandbox"]
    with SandboxPool("docker", sandbox_cfg, int(sandbox_cfg["workers"])) as pool:
        grade_timer = Timed(pool, "grade")
        start = time.perf_counter()
        rows = rollout_and_grade(
            tasks,
            args.samples,
            "bench",
            pool,
            generator,
            chat,
            RolloutConfig.from_agent(config["agent"]),
            environment_factory(config["agent"], sandbox_cfg),
            7,
            config["reward"],
            config["grading"],
            int(sandbox_cfg["workers"]),
        )
        total = time.perf_counter() - start
    workers = int(sandbox_cfg["workers"])
    result = {
        "rollouts": len(rows),
        "seconds": round(total, 2),
        "rollouts_per_second": round(len(rows) / total, 3),
        "generation_seconds": round(gen_timer.seconds, 2),
        "grading_seconds_summed_over_workers": round(grade_timer.seconds, 2),
        "grading_wall_seconds_estimate": round(grade_timer.seconds / workers, 2),
        "gradings": grade_timer.calls,
        "other_seconds": round(total - gen_timer.seconds - grade_timer.seconds / workers, 2),
        "generated_tokens": sum(sum(r["loss_mask"]) for r in rows),
    }
    out = ROOT / "benchmarks" / "out" / "rollouts.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
