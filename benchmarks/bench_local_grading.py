"""Warm local-sandbox gradings per second, two checkouts side by side, under one interpreter.

The local sandbox (a GPU box without docker) runs the tests under the interpreter the study
runs in, and that interpreter may install pytest plugins (``pytest11`` entry points: a GPU
image's hypothesis, xdist, pytest-cov, ...) that the embedded suites' image does not. This
measures what a grading costs there: the gold patches of the first ``--tasks`` tasks of the
frozen minibugs suite, graded by ``--workers`` warm local sandboxes (``sandbox.local_mode:
warm``), their gold times measured before the clock starts (one run of the tests a grading,
as in a study). Usage::

    python benchmarks/bench_local_grading.py --against CHECKOUT [--python PYTHON]
        [--tasks 30] [--workers 2] [--rounds 2]

Each measurement is this file run in a process of its own by ``--python`` (default: this
interpreter; its plugins are what the sandbox sees) with ``PYTHONPATH=<checkout>/src``,
alternating this checkout and CHECKOUT (``--rounds``), every one on the same tasks (this
checkout's frozen suite). Prints per checkout the milliseconds a grading (each round and the
median), the ratio other / this, the interpreter's ``pytest11`` plugins, and whether every
gold patch scored 1. Writes benchmarks/out/local_grading_against.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(tasks_path: str, n_tasks: int, workers: int) -> dict:
    """One measurement in this process (the checkout's modules on PYTHONPATH)."""
    from editcredit.config import load_config
    from editcredit.data.freeze import load_tasks
    from editcredit.grading.grader import grade_patch
    from editcredit.sandbox.pool import SandboxPool

    config = load_config(ROOT / "config" / "config.yaml")
    weights = (float(config["grading"]["f_weight"]), float(config["grading"]["g_weight"]))
    tasks = load_tasks(Path(tasks_path))[:n_tasks]
    cfg = {**config["sandbox"], "local_mode": "warm"}
    with SandboxPool("local", cfg, workers) as pool:
        pool.map(lambda box, t: grade_patch(t, t.patch, box, *weights), tasks[:workers])
        pool.map(lambda box, t: box.limits_for(t), tasks)  # gold times, before the clock
        start = time.perf_counter()
        reports = pool.map(lambda box, t: grade_patch(t, t.patch, box, *weights), tasks)
        seconds = time.perf_counter() - start
    return {
        "gradings": len(tasks),
        "ms_per_grading": round(1000 * seconds / len(tasks), 1),
        "resolved": sum(r.resolved == 1 for r in reports),
    }


def plugins(python: str) -> list[str]:
    code = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps(sorted({e.name for d in m.distributions() for e in d.entry_points"
        " if e.group == 'pytest11'})))"
    )
    return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True).stdout)


def run_side(python: str, checkout: Path, args: argparse.Namespace) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    tasks = ROOT / "data" / "frozen" / "minibugs" / "tasks.parquet"
    cmd = [python, __file__, "--measure", str(tasks), str(args.tasks), str(args.workers)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=checkout)
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: measurement failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sides: dict[str, list[dict]] = {"this": [], "other": []}
    for number in range(1, args.rounds + 1):
        for side, checkout in (("this", ROOT), ("other", args.against.resolve())):
            got = run_side(args.python, checkout, args)
            sides[side].append(got)
            print(f"round {number} {side}: {got}", flush=True)
    median = {s: statistics.median(m["ms_per_grading"] for m in got) for s, got in sides.items()}
    result = {
        "python": args.python,
        "pytest11_plugins": plugins(args.python),
        "tasks": args.tasks,
        "workers": args.workers,
        "this": {"checkout": str(ROOT), "runs": sides["this"], "median_ms": median["this"]},
        "other": {
            "checkout": str(args.against.resolve()),
            "runs": sides["other"],
            "median_ms": median["other"],
        },
        "ratio_other_over_this": round(median["other"] / median["this"], 2),
        "every_gold_patch_scored_1": all(
            m["resolved"] == m["gradings"] for got in sides.values() for m in got
        ),
    }
    out = ROOT / "benchmarks" / "out" / "local_grading_against.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
