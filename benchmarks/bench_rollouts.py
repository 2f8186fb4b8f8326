"""Rollouts per second of training's rollout worker, optionally side by side with another checkout.

One :class:`~editcredit.rl.rollout_worker.RolloutWorker` (the one a training segment runs:
generation, the environment, the final grading and the counterfactual of the selected block)
plays ``--tasks`` GRPO groups of ``--samples`` rollouts of the frozen suite's first train tasks
from ``models/base/{model}``, through the docker sandbox, with the config's agent budgets.
Each measurement runs in a fresh process with one checkout's ``src`` first on the path and that
checkout's own config, so ``--against /path/to/other/checkout`` measures both on the same
machine in one run, alternating (``--repeats`` rounds), and reports the ratio of the medians.
Each checkout plays its own base model (``CHECKOUT/models/base/{model}``, or
``--against-model``): checkouts differ in their chat template's tokens, so one cannot load the
other's model. The episodes then differ too, so each run also reports its mean turns and
generated tokens per rollout, and its sandbox gradings: how many, their seconds, and how many of
them (and their seconds) hit a time limit (a looping tree waits out its limits).
``PYTHONPATH=src`` makes the other checkout's pipeline run its own code where it shares this
one's environment (an editable install points at this ``src``)::

    git worktree add /tmp/baseline 2875ef0
    (cd /tmp/baseline && PYTHONPATH=src snakemake --cores 2 models/base/tiny)
    python benchmarks/bench_rollouts.py --against /tmp/baseline [--tasks 16] [--samples 8]

Tasks are validated by each checkout's own Task model (columns it does not know are left out:
the other checkout grades with the rules it has). Writes benchmarks/out/rollouts.json.
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


def time_limited(report) -> bool:
    """A sandbox report whose run, collection or any test hit its time limit (the fields are
    read where a checkout's report has them, so an older checkout's reports count too)."""
    return bool(
        getattr(report, "timeouts", None)
        or getattr(report, "collect_timeout", None)
        or getattr(report, "run_status", "finished") != "finished"
    )


class GradingTally:
    """Calls and seconds of a sandbox's gradings, and those of the time-limited ones."""

    def __init__(self, grade) -> None:
        self._grade = grade
        self.calls = self.limited_calls = 0
        self.seconds = self.limited_seconds = 0.0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        report = self._grade(*args, **kwargs)
        seconds = time.perf_counter() - start
        self.calls += 1
        self.seconds += seconds
        if time_limited(report):
            self.limited_calls += 1
            self.limited_seconds += seconds
        return report

    def summary(self) -> dict:
        return {
            "sandbox_gradings": self.calls,
            "sandbox_seconds": round(self.seconds, 2),
            "time_limited": {
                "calls": self.limited_calls,
                "seconds": round(self.limited_seconds, 2),
            },
        }


def measure(spec: dict) -> dict:
    """One measurement, inside the process of one checkout (``spec['checkout']``)."""
    import pyarrow.parquet as pq
    import torch

    from editcredit.config import load_config
    from editcredit.data.freeze import JSON_COLUMNS, task_from_record
    from editcredit.data.task import Task
    from editcredit.rl.rollout_worker import GroupJob, RolloutWorker, group_seed

    torch.set_num_threads(1)
    config = load_config(Path(spec["checkout"]) / "config" / "config.yaml")
    config["sandbox"]["report_store"] = ""  # the gradings themselves are measured
    known = set(Task.model_fields)
    rows = [r for r in pq.read_table(spec["tasks"]).to_pylist() if r["split"] == "train"]
    tasks = [
        task_from_record({k: v for k, v in r.items() if k in known}, "bench", JSON_COLUMNS)
        for r in rows[: spec["n_tasks"]]
    ]
    worker = RolloutWorker(
        spec["model_dir"],
        config["agent"],
        config["reward"],
        config["grading"],
        config["sandbox"],
    )
    inner = getattr(worker.sandbox, "sandbox", worker.sandbox)  # under a memo, if there is one
    tally = GradingTally(inner.grade)
    inner.grade = tally
    start = time.perf_counter()
    rollouts, turns, generated = 0, [], []
    phases = {"rollout": 0.0, "grading": 0.0, "counterfactual": 0.0}
    try:
        for task in tasks:
            job = GroupJob(
                "bench", 1, task, spec["samples"], group_seed(7, 1, task.instance_id), True, 1.0
            )
            out = worker.run_group(job)
            rollouts += len(out["rows"])
            turns += [row["n_turns"] for row in out["rows"]]
            generated += [sum(row["loss_mask"]) for row in out["rows"]]
            for k in phases:
                phases[k] += out["seconds"][k]
    finally:
        worker.close()
    seconds = time.perf_counter() - start
    return {
        "checkout": spec["checkout"],
        "model_dir": spec["model_dir"],
        "rollouts": rollouts,
        "mean_turns": round(statistics.mean(turns), 2),
        "generated_tokens_per_rollout": round(statistics.mean(generated), 1),
        "seconds": round(seconds, 2),
        "rollouts_per_second": round(rollouts / seconds, 3),
        **tally.summary(),
        "phase_seconds": {k: round(v, 2) for k, v in phases.items()},
    }


def model_dirs(checkouts: list[Path], args) -> dict[Path, Path]:
    """Each checkout's own base model (one clear exit naming the missing one)."""
    dirs = {checkout: checkout / "models" / "base" / args.model for checkout in checkouts}
    if args.against and args.against_model:
        dirs[checkouts[1]] = args.against_model.resolve()
    for checkout, model_dir in dirs.items():
        if not (model_dir / "config.json").is_file():
            raise SystemExit(
                f"{model_dir}: no base model for {checkout}; build it there first: "
                f"cd {checkout} && PYTHONPATH=src snakemake --cores 2 models/base/{args.model}"
            )
    return dirs


def run_checkout(checkout: Path, model_dir: Path, args) -> dict:
    spec = {
        "checkout": str(checkout),
        "tasks": str(ROOT / "data/frozen/minibugs/tasks.parquet"),
        "model_dir": str(model_dir),
        "n_tasks": args.tasks,
        "samples": args.samples,
    }
    code = (
        "import json, os; from bench_rollouts import measure; "
        "print('RESULT ' + json.dumps(measure(json.loads(os.environ['BENCH_SPEC']))))"
    )
    path = os.pathsep.join([str(checkout / "src"), str(ROOT / "benchmarks")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": path, "BENCH_SPEC": json.dumps(spec)},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{checkout}: the measurement failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--against", type=Path, help="another checkout, measured alternately")
    parser.add_argument(
        "--against-model", type=Path, help="the other checkout's base model directory"
    )
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    checkouts = [ROOT] + ([args.against.resolve()] if args.against else [])
    models = model_dirs(checkouts, args)
    runs: dict[str, list[dict]] = {str(c): [] for c in checkouts}
    for r in range(args.repeats):
        for checkout in checkouts if r % 2 == 0 else checkouts[::-1]:
            result = run_checkout(checkout, models[checkout], args)
            runs[str(checkout)].append(result)
            print(json.dumps(result), flush=True)
    median = {c: statistics.median(x["rollouts_per_second"] for x in v) for c, v in runs.items()}
    result = {"tasks": args.tasks, "samples": args.samples, "runs": runs, "median": median}
    if args.against:
        result["ratio"] = round(median[str(ROOT)] / median[str(args.against.resolve())], 3)
    out = ROOT / "benchmarks" / "out" / "rollouts.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
