"""Probe a base policy on the train and dev splits only: the figures design choices are tuned
on (METHOD §11: the holdout is reported by rule ``probe``, never tuned on).

Usage: ``python benchmarks/probe_train_dev.py MODEL_DIR [--train-tasks 40] [--samples 4]
[--dev-samples 8] [--threads 2] [--out benchmarks/out/probe_train_dev.json]``

Reads ``config/config.yaml`` (agent, reward, sandbox, generation, probe seed) and the frozen
suite of ``models.tiny.suite``; rolls out the first train tasks by id and every dev task, grades
them in the configured sandbox, and writes the probe's figures (holdout left out).

``python benchmarks/probe_train_dev.py --located-experts [--suite multibugs] [--samples 2]
[--max-turns 12] [--out ...]`` plays the searching experts (``models.tiny.experts``: weights,
pool, seed) instead, with tries scoped to their function (``agent.try_scope: function``), on
every train and dev task of the suite's frozen copy, and writes the credit figures of
:func:`editcredit.agent.probe.credit_figures`: trajectories with 2 or more eligible blocks (by
region) and the sign of D of each score-blind selected block (its counterfactual graded).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from editcredit.agent.environments import environment_factory  # noqa: E402
from editcredit.agent.probe import probe_figures, rollout_and_grade  # noqa: E402
from editcredit.agent.rollout import RolloutConfig  # noqa: E402
from editcredit.config import load_config  # noqa: E402
from editcredit.data.freeze import load_tasks  # noqa: E402
from editcredit.policy.generator_factory import load_generator  # noqa: E402
from editcredit.sandbox.pool import SandboxPool  # noqa: E402


def probe_rows(
    model_dir: str, cfg: dict, plan: list[tuple[list, int, str, int]], threads: int
) -> list[list[dict]]:
    """Trajectory rows of ``model_dir`` for each (tasks, samples, key prefix, seed offset) of
    ``plan``, rolled out and graded in the configured sandbox, one list per entry."""
    import torch

    torch.set_num_threads(threads)
    generator, chat = load_generator(model_dir, torch.device("cpu"), cfg["generation"])
    rollout = RolloutConfig.from_agent(cfg["agent"])
    seed, workers = int(cfg["probe"]["seed"]), int(cfg["sandbox"]["workers"])
    with SandboxPool(cfg["sandbox"]["backend"], cfg["sandbox"], workers) as pool:
        common = (pool, generator, chat, rollout, environment_factory(cfg["agent"], cfg["sandbox"]))
        rest = (cfg["reward"], cfg["grading"], workers)
        return [
            rollout_and_grade(tasks, samples, prefix, *common, seed + offset, *rest)
            for tasks, samples, prefix, offset in plan
        ]


def suite_tasks(cfg: dict, split: str) -> list:
    """The tasks of one split of ``models.tiny.suite``'s frozen suite, in the suite's order
    (the order rule ``probe`` rolls them out in)."""
    suite = cfg["models"]["tiny"]["suite"]
    tasks = load_tasks(HERE.parent / "data" / "frozen" / suite / "tasks.parquet")
    return [t for t in tasks if t.split == split]


def by_id(task) -> str:
    return task.instance_id


def train_dev_figures(
    model_dir: str, cfg: dict, train_tasks: int, samples: int, dev_samples: int, threads: int
) -> dict:
    """The probe's figures of ``model_dir`` on the first ``train_tasks`` train tasks by id
    (``samples`` each) and every dev task (``dev_samples`` each), graded in the configured
    sandbox; no holdout figure."""
    start = time.monotonic()
    plan = [
        (sorted(suite_tasks(cfg, "train"), key=by_id)[:train_tasks], samples, "probe-train", 0),
        (suite_tasks(cfg, "dev"), dev_samples, "probe-dev", 2),
    ]
    train_rows, dev_rows = probe_rows(model_dir, cfg, plan, threads)
    figures = probe_figures(train_rows, [], dev_rows)
    for key in ("holdout_pass_at_1", "holdout_groups", "holdout_share_groups_with_reward_variance"):
        figures.pop(key, None)
    figures["seconds"] = round(time.monotonic() - start, 1)
    return figures


def located_expert_figures(cfg: dict, suite: str, samples: int, max_turns: int) -> dict:
    """Credit figures of the searching experts under ``agent.try_scope: function`` on the
    train and dev tasks of ``suite``'s frozen copy (``samples`` episodes each)."""
    import random

    from editcredit.agent.minibugs_env import MinibugsEnv
    from editcredit.agent.probe import credit_figures, located_credit
    from editcredit.agent.search_expert import search_episode
    from editcredit.sandbox.memo import GradingMemo

    start = time.monotonic()
    experts = cfg["models"]["tiny"]["experts"]
    weights = {str(k): float(v) for k, v in experts["search_weights"].items()}
    pool, seed = int(experts["search_pool"]), str(cfg["models"]["tiny"]["seed"])
    tasks = load_tasks(HERE.parent / "data" / "frozen" / suite / "tasks.parquet")
    tasks = sorted((t for t in tasks if t.split in ("train", "dev")), key=by_id)
    workers = int(cfg["sandbox"]["workers"])
    with SandboxPool(cfg["sandbox"]["backend"], cfg["sandbox"], workers) as shared:
        memo = GradingMemo(shared, keep_timeouts=True)

        def one(job):
            task, k = job
            env = MinibugsEnv(
                memo,
                max_turns=max_turns,
                numbered_lines=False,
                candidates=True,
                try_scope="function",
            )
            rng = random.Random(f"{seed}:{task.instance_id}:{k}")
            search_episode(env, task, rng, weights, max_turns, pool=pool, pool_seed=seed)
            key = f"located-experts:{task.instance_id}:{k}"
            return {
                **located_credit(task, env, key, memo, cfg["grading"], located=True),
                "split": task.split,
            }

        from concurrent.futures import ThreadPoolExecutor

        jobs = [(t, k) for t in tasks for k in range(samples)]
        with ThreadPoolExecutor(workers) as ex:
            records = list(ex.map(one, jobs))
    figures = {
        "suite": suite,
        "splits": ["train", "dev"],
        "samples": samples,
        "max_turns": max_turns,
        **credit_figures(records),
    }
    figures["seconds"] = round(time.monotonic() - start, 1)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir", nargs="?", default="")
    ap.add_argument("--located-experts", action="store_true")
    ap.add_argument("--suite", default="multibugs")
    ap.add_argument("--max-turns", type=int, default=0, help="0: agent.max_turns")
    ap.add_argument("--train-tasks", type=int, default=40)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--dev-samples", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2, help="torch threads of generation")
    ap.add_argument("--out", default=str(HERE / "out" / "probe_train_dev.json"))
    args = ap.parse_args()
    cfg = load_config(str(HERE.parent / "config" / "config.yaml"))
    if args.located_experts:
        turns = args.max_turns or int(cfg["agent"]["max_turns"])
        figures = located_expert_figures(cfg, args.suite, args.samples, turns)
    else:
        figures = train_dev_figures(
            args.model_dir, cfg, args.train_tasks, args.samples, args.dev_samples, args.threads
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
