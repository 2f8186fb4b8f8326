"""Does the trainer raise the reward it is given? Runs of arm O at several learning rates against
the no-learning control, on the default suite and base policy (METHOD §5's health question).

Every run starts from ``models/base/tiny`` with the same seed, so all of them, and the control
(the base policy replayed on the same draws and sampling seeds), meet the same tasks with the
same random numbers at every step: differences between rows are the update's doing. Needs the
frozen suite, its controls and the base model (``snakemake --cores 2 models/base/tiny``).
Usage::

    python benchmarks/bench_learning.py [--lrs 1e-4 3e-4 1e-3] [--steps 16] [--tasks 8]
        [--group 8] [--seed 42] [--jobs 1] [--set training.grpo.loss_aggregation=sequence_mean ...]

Writes benchmarks/out/learning/<tag>-s<seed>.json (one file per settings and seed; runs of
several seeds can share ``--out`` at once) and prints the table.
Not a timed test: one run per row, minutes each on 2 cores.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import multiprocessing
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import yaml

from editcredit.config import load_config
from editcredit.job_settings import ControlReplaySettings, SegmentSettings
from editcredit.rl.train_job import (
    ControlReplayJob,
    SegmentJob,
    control_replay_job,
    train_segment_job,
)
from editcredit.settings import Settings
from editcredit.stats.learning import delta_ci, learning_vs_control

ROOT = Path(__file__).resolve().parents[1]


def set_value(config: dict, dotted: str) -> None:
    """``a.b.c=value`` (value parsed as YAML) into the nested config."""
    key, _, raw = dotted.partition("=")
    *parents, leaf = key.split(".")
    node = config
    for p in parents:
        node = node[p]
    node[leaf] = yaml.safe_load(raw)


def summary(run: pd.DataFrame, control: pd.DataFrame, steps: int, boot: dict) -> dict:
    """The run against its control; ``boot`` is config ``stats.bootstrap``."""
    ci = (boot["n_resamples"], boot["rng_seed"], boot["level"])
    live = run[~run["masked"].astype(bool)]
    by_step = live.groupby("step")["Y"].mean()
    k = max(1, steps // 4)
    record = learning_vs_control(run, control, steps)
    return {
        "pass_mean": float(by_step.mean()),
        "pass_first_quarter": float(by_step.loc[1:k].mean()),
        "pass_last_quarter": float(by_step.loc[steps - k + 1 :].mean()),
        "format_error_rate": float(run["format_error"].mean()),
        "p2p_regression_rate": float(live["p2p_regression"].mean()),
        "control_last_quarter": record["control_pass_last_quarter"],
        "delta_last_quarter": record["delta_last_quarter"],
        "delta_last_quarter_ci": delta_ci(run, control, record["last_quarter_steps"], *ci),
        "delta_after_first": record["delta_after_first"],
        "delta_after_first_ci": delta_ci(run, control, list(range(2, steps + 1)), *ci),
        "first_step_equal": record["first_step_equal"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-4, 3e-4, 1e-3])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--set", action="append", default=[], help="config override a.b=v")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (processes)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads per run")
    parser.add_argument("--gpus", type=int, default=0, help="GPUs per run")
    parser.add_argument("--control", help="an existing control replay of the same draws")
    parser.add_argument(
        "--pool",
        help="the training pool file (default: results/training/pool.json when the config "
        "screens the pool, made by `snakemake results/training/pool.json`)",
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "learning"))
    args = parser.parse_args()

    config = load_config(ROOT / "config" / "config.yaml")
    for item in args.set:
        set_value(config, item)
    training = config["training"]
    training.update(endpoint_step=args.steps, segment_steps=args.steps)
    training["grpo"].update(tasks_per_step=args.tasks, group_size=args.group)
    suite = training["suite"]
    tasks = str(ROOT / "data" / "frozen" / suite / "tasks.parquet")
    controls = str(ROOT / "results" / "controls" / suite / "summary.json")
    run_kw = dict(gpus=args.gpus, threads=args.threads, config=config)
    base = str(ROOT / "models" / "base" / training["model"])
    pool = args.pool
    if pool is None and training.get("pool_screen", {}).get("samples"):
        pool = str(ROOT / "results" / "training" / "pool.json")
    if pool and not Path(pool).exists():
        raise SystemExit(f"{pool}: no training pool (snakemake --cores 2 {pool})")
    pool_ids = json.loads(Path(pool).read_text())["pool"] if pool else None
    settings = json.dumps(
        {"set": args.set, "grpo": training["grpo"], "pool": pool_ids}, sort_keys=True
    )
    tag = hashlib.sha256(settings.encode()).hexdigest()[:10]
    out = Path(args.out) / tag
    out.mkdir(parents=True, exist_ok=True)

    control_file = out / f"control-s{args.seed}-n{args.steps}.parquet"
    if args.control and not control_file.exists():
        shutil.copyfile(args.control, control_file)  # the draws do not depend on the update
    work = []
    if not control_file.exists():
        job = ControlReplayJob(args.seed, base, tasks, controls, str(control_file), pool=pool)
        replay = ControlReplaySettings.from_settings(Settings.from_config(config))
        work.append((control_replay_job, (job, replay), run_kw))
    segments = {}
    for lr in args.lrs:
        run_config = copy.deepcopy(config)
        run_config["training"]["grpo"]["lr"] = lr
        seg = out / f"s{args.seed}" / f"lr{lr:g}" / f"step_{args.steps}"
        segments[lr] = seg
        if not (seg / "rollouts.parquet").exists():
            job = SegmentJob(
                f"O-s{args.seed}", args.steps, base, tasks, controls, str(seg), pool=pool
            )
            segment = SegmentSettings.from_settings(Settings.from_config(run_config))
            kw = {**run_kw, "gate_dir": str(out / "gates")}
            work.append((train_segment_job, (job, segment), kw))
    if args.jobs > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            for future in [pool.submit(fn, *a, **kw) for fn, a, kw in work]:
                future.result()
    else:
        for fn, a, kw in work:
            fn(*a, **kw)
    control = pd.read_parquet(control_file)
    rows = []
    for lr, seg in segments.items():
        run = pd.read_parquet(seg / "rollouts.parquet")
        entropy = pd.read_parquet(seg / "metrics.parquet")["entropy"]
        rows.append(
            {
                "lr": lr,
                **summary(run, control, args.steps, config["stats"]["bootstrap"]),
                "entropy_first": float(entropy.iloc[0]),
                "entropy_last": float(entropy.iloc[-1]),
            }
        )
    table = pd.DataFrame(rows)
    record = {"settings": json.loads(settings), "seed": args.seed, "rows": rows}
    (Path(args.out) / f"{tag}-s{args.seed}.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"settings {tag}: {args.set or 'config defaults'}")
    table["lr"] = table["lr"].map(lambda x: f"{x:g}")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
