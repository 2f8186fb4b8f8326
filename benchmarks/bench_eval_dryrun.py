"""Snakemake dry-run time of the full-study evaluation (METHOD §8): 11 models, 28,600 slots.

A scratch workflow (``rules/common.smk`` + ``rules/eval.smk``, a copy of the config with the
full-study plan: O/B/M x 3 seeds + E x 1 = 10 runs + base; holdout 100 tasks x n=16, broad 500
tasks x n=2) on a synthetic frozen suite of 500 tasks and placeholder checkpoint directories.
Training rules are left out: the endpoint checkpoints are source files here. Times the dry run
(``snakemake -n``, the wall time a user waits, Python start-up included) in three states:

- ``fresh``: no evaluation output yet (1 plan + 22 eval_model + 22 score jobs pending);
- ``planned``: plan.parquet written (its 28,600 rows built by the real eval_plan rule, timed);
- ``done``: every declared output present ("nothing to be done").

Usage::

    python benchmarks/bench_eval_dryrun.py [--repeats 3] [--keep DIR]

Writes benchmarks/out/eval_dryrun.json and prints it. Goal: each dry run under 30 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from editcredit.data.freeze import write_parquet
from editcredit.data.task import Task
from editcredit.sandbox.patches import diff_trees

ROOT = Path(__file__).resolve().parents[1]
SNAKEFILE = """\
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/eval.smk"


rule all:
    input:
        PLAN.eval_targets,
"""
PLAN = {"O": [42, 314159, 271828], "B": [42, 314159, 271828], "M": [42, 314159, 271828]}
PLAN["E"] = [42]


def synthetic_suite(n: int = 500, holdout: int = 100) -> list[Task]:
    """``n`` small inline tasks; the first ``holdout`` in the holdout split, 10 % dev."""
    tasks = []
    for i in range(n):
        bug = f"def f{i}(a, b):\n    return a - b\n"
        fixed = bug.replace("a - b", "a + b")
        split = "holdout" if i < holdout else ("dev" if i % 10 == 0 else "train")
        tasks.append(
            Task(
                instance_id=f"synth__mod{i:03d}__f{i}",
                repo="synth/mod",
                problem_statement=f"f{i}(2, 3) returns -1, expected 5",
                patch=diff_trees({f"m{i}.py": bug}, {f"m{i}.py": fixed}),
                FAIL_TO_PASS=[f"test_m{i}.py::test_f"],
                PASS_TO_PASS=[],
                test_paths=[f"test_m{i}.py"],
                files={
                    f"m{i}.py": bug,
                    f"test_m{i}.py": f"from m{i} import f{i}\n\n\ndef test_f():\n"
                    f"    assert f{i}(2, 3) == 5\n",
                },
                suite="synth",
                split=split,
            )
        )
    return tasks


def build(workdir: Path) -> None:
    for name in ("rules/common.smk", "rules/eval.smk", "scripts", "config", "envs"):
        src, dst = ROOT / name, workdir / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    (workdir / "Snakefile").write_text(SNAKEFILE)
    cfg = yaml.safe_load((workdir / "config/config.yaml").read_text())
    cfg["training"].update(plan=PLAN, endpoint_step=80, segment_steps=10)
    cfg["evaluation"].update(
        models=[],
        evalsets={
            "holdout": {"suite": "synth", "splits": ["holdout"], "samples": 16},
            "broad": {"suite": "synth", "splits": ["train", "dev", "holdout"], "samples": 2},
        },
    )
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    write_parquet(synthetic_suite(), workdir / "data/frozen/synth/tasks.parquet")
    model_dirs = [workdir / "models/base" / cfg["training"]["model"]]
    model_dirs += [workdir / f"runs/{a}-s{s}/step_80/model" for a, ss in PLAN.items() for s in ss]
    for d in model_dirs:
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text("{}\n")


def snakemake(workdir: Path, *args: str) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "snakemake", "--nolock", "--cores", "2", *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return seconds, proc.stdout + proc.stderr


def dry_run(workdir: Path, repeats: int, expect: str) -> dict:
    times = []
    for _ in range(repeats):
        seconds, out = snakemake(workdir, "-n")
        if expect not in out:
            raise SystemExit(f"dry run: expected {expect!r} in the output:\n{out[-2000:]}")
        times.append(seconds)
    return {"median_s": round(statistics.median(times), 3), "runs_s": [round(t, 3) for t in times]}


def touch_outputs(workdir: Path) -> None:
    """Every declared eval output, in DAG order (plan first, then slots, then scores)."""
    models = ["base"] + [f"{a}-s{s}" for a, ss in PLAN.items() for s in ss]
    for kind in ("slots.parquet", "predictions", "scores.json"):
        for m in models:
            for e in ("holdout", "broad"):
                path = workdir / "results/eval" / m / e / kind
                path.parent.mkdir(parents=True, exist_ok=True)
                if kind == "predictions":
                    path.mkdir(exist_ok=True)
                else:
                    path.touch()
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", help="build the scratch workflow here and keep it")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="eval-dryrun-"))
    try:
        build(workdir)
        result: dict = {"models": 11, "evalsets": {"holdout": [100, 16], "broad": [500, 2]}}
        result["fresh"] = dry_run(workdir, args.repeats, "eval_plan")
        seconds, _ = snakemake(workdir, "results/eval/plan.json")
        plan = json.loads((workdir / "results/eval/plan.json").read_text())
        result["slots"] = plan["slots"]
        result["eval_plan_rule_s"] = round(seconds, 3)
        result["planned"] = dry_run(workdir, args.repeats, "eval_model")
        touch_outputs(workdir)
        result["done"] = dry_run(workdir, args.repeats, "Nothing to be done")
        result["goal_s"] = 30
        result["meets_goal"] = all(result[k]["median_s"] < 30 for k in ("fresh", "planned", "done"))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    out = ROOT / "benchmarks" / "out" / "eval_dryrun.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
