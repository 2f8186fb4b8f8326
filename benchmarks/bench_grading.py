"""Grading throughput: warm sandboxes vs a fresh container (or process) each.

The anchor is a fresh container per grading, as SWE-bench's harness does (``--backend
local``: a fresh runner process per grading, ``sandbox.local_mode: fresh``, against the local
backend's warm server). Both modes grade the same tasks (gold patches of the frozen minibugs
suite) with the same number of parallel workers, in one run. Usage::

    python benchmarks/bench_grading.py [--tasks 40] [--workers 2] [--backend docker|local]
        [--gold-known]

A task's first grading in a sandbox measures its gold times (one run of the gold patch held to
the whole-run limit, ``sandbox.test_limits.measure_gold``) before the graded run, so each
grading here is two runs of the tests. ``--gold-known`` measures them before the clock starts,
as a study's jobs have them from rule control: each timed grading is then one run (a second
figure beside the benchmark's, not a replacement for it).

Prints gradings per second for both and the ratio; writes benchmarks/out/grading.json
(``grading_local.json`` for the local backend; ``_gold_known`` added with ``--gold-known``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.grading.grader import grade_patch
from editcredit.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parents[1]
#: The utility weights of the repository config (the grader has no defaults).
_GRADING = load_config(ROOT / "config" / "config.yaml")["grading"]
WEIGHTS = (float(_GRADING["f_weight"]), float(_GRADING["g_weight"]))


def throughput(
    mode: str,
    tasks,
    workers: int,
    sandbox_cfg: dict,
    backend: str = "docker",
    gold_known: bool = False,
) -> dict:
    cfg = {**sandbox_cfg, f"{backend}_mode": mode}
    with SandboxPool(backend, cfg, workers) as pool:
        pool.map(lambda box, t: grade_patch(t, t.patch, box, *WEIGHTS), tasks[:workers])  # warm-up
        if gold_known:  # every task's gold times, measured before the clock starts
            pool.map(lambda box, t: box.limits_for(t), tasks)
        start = time.perf_counter()
        reports = pool.map(lambda box, t: grade_patch(t, t.patch, box, *WEIGHTS), tasks)
        seconds = time.perf_counter() - start
    resolved = sum(r.resolved == 1 for r in reports)
    if resolved != len(tasks):
        raise SystemExit(f"{mode}: only {resolved}/{len(tasks)} gold patches scored 1")
    return {
        "gradings": len(tasks),
        "seconds": round(seconds, 3),
        "per_second": round(len(tasks) / seconds, 3),
        "seconds_per_grading": round(seconds / len(tasks), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--suite", default="minibugs")
    parser.add_argument("--backend", choices=("docker", "local"), default="docker")
    parser.add_argument("--gold-known", action="store_true", help="gold times measured untimed")
    args = parser.parse_args()
    config = load_config(ROOT / "config" / "config.yaml")
    tasks = load_tasks(ROOT / "data" / "frozen" / args.suite / "tasks.parquet")[: args.tasks]
    sides = {
        mode: throughput(
            mode, tasks, args.workers, config["sandbox"], args.backend, args.gold_known
        )
        for mode in ("fresh", "warm")
    }
    fresh, warm = sides["fresh"], sides["warm"]
    result = {
        "anchor_fresh_container": fresh,
        "warm_sandbox": warm,
        "workers": args.workers,
        "backend": args.backend,
        "gold_known": args.gold_known,
        "ratio": round(warm["per_second"] / fresh["per_second"], 2),
    }
    name = "grading" if args.backend == "docker" else f"grading_{args.backend}"
    name += "_gold_known.json" if args.gold_known else ".json"
    out = ROOT / "benchmarks" / "out" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
