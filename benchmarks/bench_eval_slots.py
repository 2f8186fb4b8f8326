"""Evaluation slots per second of the default (generation plus grading), split by phase.

The trained base policy (models/base/tiny) on the default holdout eval set (every holdout
task of the frozen minibugs suite, ``evaluation.evalsets.holdout.samples`` each; fewer with
--tasks), through the slot runner (batched generation across tasks, the attempt ledger,
grading overlapped with generation) and the docker sandbox pool, with the config's agent
budgets, eval batch size and generation backend (``generation.backend``; before, the schema's
default, ``transformers``, was measured while the study runs ``static``), on ``--threads`` torch
threads (1, what the default profile gives an evaluation job). Model loading and sandbox
start-up are outside the timing. Every measurement reports the SHA256 of its episodes'
trajectory rows (token ids, log-probs, turns, patches: ``trajectories_sha256``); side by side
(``--workers``, ``--against``) ``same_trajectories`` says whether every run sampled the same
episodes, byte for byte.
Usage::

    python benchmarks/bench_eval_slots.py [--tasks N] [--samples n] [--workers 2 6] [--base DIR]
    python benchmarks/bench_eval_slots.py --against CHECKOUT [--rounds 2] [--warm] [--base DIR]
    python benchmarks/bench_eval_slots.py --against CHECKOUT --jobs 2 [--rounds 2] [--base DIR]

With several ``--workers`` counts, one measurement each (same policy, same slots), side by
side: the speedup over the first and whether the outcomes are the same.

With ``--against CHECKOUT`` (another checkout of the project, e.g. a clone at an older commit)
the two codes run side by side on the same base (this checkout's models/base/<model>, or
``--base DIR``) and the same slots: each measurement is this file run in a process of its own
with ``PYTHONPATH=<checkout>/src`` (so it imports that checkout's modules; this file uses only
APIs both sides have) and that checkout's config, alternating this, other, this, other
(``--rounds``), each on its own copy of its checkout's frozen suite and its own fresh report
store (a cold store, as the first model of a study meets it). ``--warm`` measures a second pass
over the same store as well (as the later models of a study meet it). Prints per checkout the
slots per second (each round and the median), the ratio this / other and whether every
measurement's outcomes are the same. Writes benchmarks/out/eval_slots_against.json.

With ``--jobs K`` as well, each measurement is K evaluations at once over one fresh store (the
same tasks, evaluation seeds seed..seed+K-1), as the evaluations a GPU box begins together meet
the store: per checkout the wall time from the first start to the last exit and the test runs
that reached the sandboxes, summed over the K jobs. Writes benchmarks/out/eval_jobs_at_once.json.

Phases: ``generation`` is the wall time of the generation batches (model forward passes plus
the environment's steps, including the episodes' own test runs); ``model_forward`` and
``in_episode_test_runs`` are parts of it; ``final_grading`` is the grading of final patches
(summed over the worker threads, and that sum / workers as a wall estimate; it overlaps the
next batch's generation). Writes benchmarks/out/eval_slots.json and prints it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import torch

from editcredit.agent.environments import environment_factory
from editcredit.agent.probe_job import load_policy
from editcredit.agent.rollout import RolloutConfig
from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.evaluation.journal import Journal
from editcredit.evaluation.ledger import Limits
from editcredit.evaluation.runner import SliceSettings, run_slots
from editcredit.grading.grader_identity import study_report_store
from editcredit.sandbox.base import grade_selected
from editcredit.sandbox.memo import GradingMemo
from editcredit.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parents[1]


class PhaseTimer:
    """Wraps ``grade`` and sums wall time by caller (final gradings run in 'grade' threads)
    and by whether the run hit a time limit (a test or the collection timed out)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.seconds: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        """The rest of the pool's interface (the report store asks it for the limits a
        grading runs under, part of a stored report's key)."""
        return getattr(self.inner, name)

    def grade(self, task, patch, select=None):
        phase = (
            "final_grading"
            if threading.current_thread().name.startswith("grade")
            else "in_episode_test_runs"
        )
        start = time.perf_counter()
        report = None
        try:
            report = grade_selected(self.inner, task, patch, select)
            return report
        finally:
            limited = report is not None and bool(
                report.run_status == "timeout" or report.timeouts or report.collect_timeout
            )
            with self._lock:
                for key in (phase, f"{phase}_time_limited" if limited else None):
                    if key:
                        self.seconds[key] += time.perf_counter() - start
                        self.calls[key] += 1


class TimedGenerator:
    """Times the wrapped generator's calls. It passes on what the rollout loop asks of a
    generator (``keeps_prefixes``, ``release``, the ``keys``), so the episodes encode only each
    turn's new tokens, as in the evaluation job; without them every turn re-encoded the whole
    conversation and the benchmark measured a slower generation than the job's."""

    def __init__(self, inner) -> None:
        self.inner, self.seconds, self.calls = inner, 0.0, 0
        self.keeps_prefixes = bool(getattr(inner, "keeps_prefixes", False))

    def release(self) -> None:
        self.inner.release()

    def generate(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.inner.generate(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def measure(
    workers, generator, chat, load_s, config, holdout, tasks, slots, samples, store: str = ""
):
    """One measurement of the slots with ``workers`` sandboxes (and grading threads); with
    ``store`` (a directory), behind a report store there, as the evaluation job grades."""
    timed = TimedGenerator(generator)
    sandbox_cfg = config["sandbox"]
    ev = config["evaluation"]
    settings = SliceSettings(
        model="bench",
        evalset="holdout",
        rollout=RolloutConfig.from_agent(config["agent"]),
        environment=environment_factory(config["agent"], config["sandbox"]),
        limits=Limits(**ev["limits"]),
        seed=int(ev["seed"]),
        batch_size=int(ev["batch_size"]),
        workers=workers,
        f_weight=float(config["grading"]["f_weight"]),
        g_weight=float(config["grading"]["g_weight"]),
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp,
        SandboxPool("docker", sandbox_cfg, workers) as pool,
    ):
        timer = PhaseTimer(pool)  # inside the memo: the runs that reach the sandbox
        reports = study_report_store({**sandbox_cfg, "report_store": store}) if store else None
        memo = GradingMemo(timer, store=reports)  # as the eval job grades: each tree once
        journal = Journal(Path(tmp) / "j", {"bench": 1})
        start = time.perf_counter()
        history, stats = run_slots(
            slots,
            tasks,
            settings,
            journal,
            memo,
            lambda: (timed, chat),
            Path(tmp) / "j" / "trajectories",
            log=lambda _: None,
        )
        total = time.perf_counter() - start
        digest = trajectories_digest(Path(tmp) / "j" / "trajectories")
    states, infra = Counter(), Counter()
    for attempts in history.values():
        for a in attempts:
            if a.outcome == "infra_failure":
                causes = a.evidence.get("in_episode_failures") or [a.evidence]
                for c in causes:
                    infra[f"{a.kind}: {c.get('run_status') or 'exception'}"] += 1
        last = attempts[-1]
        states[last.verdict_kind if last.outcome == "report" else "unresolved"] += 1
    final = timer.seconds["final_grading"]
    result = {
        "slots": len(slots),
        "tasks": len(holdout),
        "samples": samples,
        "seconds": round(total, 2),
        "slots_per_second": round(len(slots) / total, 3),
        "phases": {
            "generation_wall_s": round(stats.generation_seconds, 2),
            "generation_slots_per_second": round(len(slots) / stats.generation_seconds, 3),
            "model_forward_s": round(timed.seconds, 2),
            "in_episode_test_runs_s_summed": round(timer.seconds["in_episode_test_runs"], 2),
            "in_episode_test_runs": timer.calls["in_episode_test_runs"],
            "final_grading_s_summed": round(final, 2),
            "final_grading_wall_estimate_s": round(final / workers, 2),
            "final_gradings": timer.calls["final_grading"],
            "docker_gradings_per_second": round(timer.calls["final_grading"] / (final / workers), 3)
            if final
            else None,
            "grading_slots_per_second": round(len(slots) / (final / workers), 3) if final else None,
            "after_last_batch_s": round(total - stats.generation_seconds, 2),
            "memo_hits": memo.hits,
            "store_stored": memo.stored,
            "time_limited": {
                k: {"calls": timer.calls[k], "seconds_summed": round(timer.seconds[k], 2)}
                for k in ("in_episode_test_runs_time_limited", "final_grading_time_limited")
            },
        },
        "attempts": stats.attempts,
        "outcomes": dict(sorted(states.items())),
        "trajectories_sha256": digest,
        "infrastructure_failures": dict(sorted(infra.items())),
        "batch_size": settings.batch_size,
        "workers": workers,
        "model_load_s": round(load_s, 2),
        "device": "cpu",
    }
    return result


def trajectories_digest(directory: Path) -> str:
    """SHA256 of every episode's trajectory row (token ids, log-probs, turns, patch), in
    rollout-key order: two runs that sampled the same episodes give the same digest."""
    import pyarrow.parquet as pq

    rows = [r for f in sorted(directory.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    rows.sort(key=lambda r: (r["rollout_key"], r["attempt"]))
    text = json.dumps(rows, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def side_by_side(runs: list[dict]) -> dict:
    """The measurements with the first's wall time over each one's, and whether every run
    gave the same outcomes (the worker count must not change a result)."""
    first = runs[0]
    return {
        "runs": runs,
        "speedup_over_first": {
            str(r["workers"]): round(first["seconds"] / r["seconds"], 2) for r in runs
        },
        "same_outcomes": all(r["outcomes"] == first["outcomes"] for r in runs),
        "same_trajectories": all(
            r["trajectories_sha256"] == first["trajectories_sha256"] for r in runs
        ),
    }


def start_side(
    checkout: Path, args: argparse.Namespace, store: Path, out: Path, suite: Path, seed: int = 0
) -> subprocess.Popen:
    """Start one measurement of ``checkout``'s code: this file in a process of its own that
    imports the checkout's modules, on a fresh copy (in ``suite``) of the checkout's frozen
    suite; ``seed`` is added to the evaluation's seed."""
    shutil.copytree(checkout / "data/frozen/minibugs", suite / "minibugs")
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(out)]
    command += ["--root", str(checkout), "--suite", str(suite / "minibugs")]
    command += ["--base", str(args.base), "--store", str(store), "--seed-offset", str(seed)]
    command += ["--tasks", str(args.tasks), "--samples", str(args.samples)]
    command += [f"--workers={w}" for w in args.workers[:1]]
    command += ["--threads", str(args.threads)]
    return subprocess.Popen(command, env=env, cwd=checkout)


def one_side(checkout: Path, args: argparse.Namespace, store: Path, out: Path) -> dict:
    """One measurement of ``checkout``'s code (:func:`start_side`), waited for."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as suite:
        if start_side(checkout, args, store, out, Path(suite)).wait() != 0:
            raise SystemExit(f"the measurement of {checkout} failed")
    return json.loads(out.read_text())


def runs_in_sandboxes(result: dict) -> int:
    """The test runs of one measurement that reached its sandboxes (not its memo or store)."""
    phases = result["phases"]
    return int(phases["in_episode_test_runs"]) + int(phases["final_gradings"])


def jobs_at_once(args: argparse.Namespace) -> dict:
    """``args.jobs`` evaluations at once over one fresh store, as the evaluations a GPU box
    begins together meet it: the same tasks, each its own evaluation seed (so their episodes
    differ as different models' do). This checkout and ``args.against`` alternating,
    ``args.rounds`` rounds; per round the wall time from the first start to the last exit
    (model loads and sandbox start-ups included, alike on both sides) and the runs of tests
    that reached the sandboxes, summed over the jobs."""
    sides = {"this": ROOT, "other": Path(args.against).resolve()}
    rounds: dict[str, list[dict]] = {s: [] for s in sides}
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as tmp:
        for r in range(args.rounds):
            for side, checkout in sides.items():
                here = Path(tmp) / f"{side}-{r}"
                store = here / "store"
                outs = [here / f"job{j}.json" for j in range(args.jobs)]
                start = time.perf_counter()
                jobs = []
                for j, out in enumerate(outs):
                    (here / f"suite{j}").mkdir(parents=True)
                    jobs.append(start_side(checkout, args, store, out, here / f"suite{j}", j))
                if any(job.wait() != 0 for job in jobs):
                    raise SystemExit(f"a measurement of {checkout} failed")
                wall = time.perf_counter() - start
                results = [json.loads(out.read_text()) for out in outs]
                rounds[side].append(
                    {
                        "wall_s": round(wall, 2),
                        "runs_in_sandboxes": sum(runs_in_sandboxes(x) for x in results),
                        "read_from_store": sum(x["phases"]["store_stored"] for x in results),
                        "seconds_each": [x["seconds"] for x in results],
                        "outcomes": [x["outcomes"] for x in results],
                        "trajectories_sha256": [x["trajectories_sha256"] for x in results],
                    }
                )
                print(
                    f"round {r + 1} {side} ({checkout}): {args.jobs} jobs in {wall:.1f} s, "
                    f"{rounds[side][-1]['runs_in_sandboxes']} runs in the sandboxes",
                    flush=True,
                )
    median = {s: statistics.median(x["wall_s"] for x in rounds[s]) for s in sides}
    every = [x for s in sides for x in rounds[s]]
    return {
        "this": str(ROOT),
        "other": str(sides["other"]),
        "base": str(args.base),
        "jobs": args.jobs,
        "wall_s": {s: [x["wall_s"] for x in rounds[s]] for s in sides},
        "runs_in_sandboxes": {s: [x["runs_in_sandboxes"] for x in rounds[s]] for s in sides},
        "ratio_other_over_this_wall": round(median["other"] / median["this"], 2),
        "same_outcomes": all(x["outcomes"] == every[0]["outcomes"] for x in every),
        "same_trajectories": all(
            x["trajectories_sha256"] == every[0]["trajectories_sha256"] for x in every
        ),
        "rounds": rounds,
    }


def against(args: argparse.Namespace) -> dict:
    """This checkout and ``args.against`` alternating, ``args.rounds`` rounds: a cold store
    each (and with ``args.warm`` a second pass over it), the slots per second side by side."""
    sides = {"this": ROOT, "other": Path(args.against).resolve()}
    passes = ["cold", "warm"] if args.warm else ["cold"]
    runs: dict[str, dict[str, list[dict]]] = {p: {s: [] for s in sides} for p in passes}
    with tempfile.TemporaryDirectory(prefix="bench-against-") as tmp:
        for r in range(args.rounds):
            for side, checkout in sides.items():
                store = Path(tmp) / f"store-{side}-{r}"  # fresh: as a study's first model
                for p in passes:
                    out = Path(tmp) / f"{side}-{r}-{p}.json"
                    result = one_side(checkout, args, store, out)
                    runs[p][side].append(result)
                    print(
                        f"round {r + 1} {p} {side} ({checkout}): "
                        f"{result['slots_per_second']} slots/s, {result['seconds']} s",
                        flush=True,
                    )
    summary: dict = {"this": str(ROOT), "other": str(sides["other"]), "base": str(args.base)}
    every = [x for p in passes for s in sides for x in runs[p][s]]
    for p in passes:
        median = {s: statistics.median(x["slots_per_second"] for x in runs[p][s]) for s in sides}
        summary[p] = {
            "slots_per_second": {s: [x["slots_per_second"] for x in runs[p][s]] for s in sides},
            "median_slots_per_second": median,
            "ratio_this_over_other": round(median["this"] / median["other"], 2),
            "runs": runs[p],
        }
    summary["same_outcomes"] = all(x["outcomes"] == every[0]["outcomes"] for x in every)
    summary["same_trajectories"] = all(
        x["trajectories_sha256"] == every[0]["trajectories_sha256"] for x in every
    )
    summary["slots"] = every[0]["slots"]
    return summary


def single(args: argparse.Namespace) -> None:
    """One measurement for ``--against``: the modules on the path (another checkout's where
    PYTHONPATH names it), that checkout's config, the given base, suite copy and store."""
    torch.set_num_threads(args.threads)
    root = Path(args.root)
    config = load_config(root / "config" / "config.yaml")
    config["evaluation"]["seed"] = int(config["evaluation"]["seed"]) + args.seed_offset
    holdout = [t for t in load_tasks(Path(args.suite) / "tasks.parquet") if t.split == "holdout"]
    holdout = holdout[: args.tasks or None]
    samples = args.samples or int(config["evaluation"]["evalsets"]["holdout"]["samples"])
    tasks = {t.instance_id: t for t in holdout}
    slots = [(t.instance_id, k) for t in holdout for k in range(samples)]
    clock = time.perf_counter()
    generator, chat = load_policy(str(args.base), torch.device("cpu"), config.get("generation"))
    load_s = time.perf_counter() - clock
    workers = args.workers[0] if args.workers else int(config["sandbox"]["workers"])
    result = measure(
        workers, generator, chat, load_s, config, holdout, tasks, slots, samples, args.store
    )
    Path(args.one).write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=0, help="first N holdout tasks (0 = all)")
    parser.add_argument("--samples", type=int, default=0, help="n (0 = the config's)")
    parser.add_argument("--model", default="tiny")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[],
        help="sandbox workers, one measurement each, side by side (default: the config's)",
    )
    parser.add_argument("--against", default="", help="another checkout, side by side")
    parser.add_argument("--rounds", type=int, default=2, help="with --against: A B rounds")
    parser.add_argument("--warm", action="store_true", help="with --against: a warm pass too")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="with --against: this many evaluations at once over one fresh store",
    )
    parser.add_argument(
        "--base", default="", help="the base model's directory (default: models/base/MODEL)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: what the default profile gives an evaluation job)",
    )
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)  # one side's process
    parser.add_argument("--root", default="", help=argparse.SUPPRESS)
    parser.add_argument("--suite", default="", help=argparse.SUPPRESS)
    parser.add_argument("--store", default="", help=argparse.SUPPRESS)
    parser.add_argument("--seed-offset", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        single(args)
        return
    args.base = Path(args.base or ROOT / "models/base" / args.model).resolve()
    if not (args.base / "config.json").is_file():
        raise SystemExit(
            f"{args.base}: no model directory (no config.json); build it with "
            f"`snakemake --cores 2 models/base/{args.model}` or pass --base DIR"
        )
    if args.against and args.jobs > 1:
        summary = jobs_at_once(args)
        out = ROOT / "benchmarks" / "out" / "eval_jobs_at_once.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary, indent=2) + "\n")
        print(json.dumps({k: v for k, v in summary.items() if k != "rounds"}))
        return
    if args.against:
        summary = against(args)
        out = ROOT / "benchmarks" / "out" / "eval_slots_against.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary, indent=2) + "\n")
        print(json.dumps({k: v for k, v in summary.items() if k not in ("cold", "warm")}))
        for p in ("cold", "warm"):
            if p in summary:
                brief = {k: v for k, v in summary[p].items() if k != "runs"}
                print(p, json.dumps(brief))
        return
    torch.set_num_threads(args.threads)
    config = load_config(ROOT / "config" / "config.yaml")
    holdout = [
        t for t in load_tasks(ROOT / "data/frozen/minibugs/tasks.parquet") if t.split == "holdout"
    ][: args.tasks or None]
    args.samples = args.samples or int(config["evaluation"]["evalsets"]["holdout"]["samples"])
    tasks = {t.instance_id: t for t in holdout}
    slots = [(t.instance_id, k) for t in holdout for k in range(args.samples)]
    clock = time.perf_counter()
    generator, chat = load_policy(str(args.base), torch.device("cpu"), config.get("generation"))
    load_s = time.perf_counter() - clock
    runs = [
        measure(n, generator, chat, load_s, config, holdout, tasks, slots, args.samples)
        for n in args.workers or [int(config["sandbox"]["workers"])]
    ]
    result = runs[0] if len(runs) == 1 else side_by_side(runs)
    out = ROOT / "benchmarks" / "out" / "eval_slots.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
