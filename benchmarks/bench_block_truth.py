"""The known truth of edit blocks (``editcredit.data.block_truth.block_truth``), this checkout
against another, side by side: the labelling every rollout worker does for every arm's rollouts
(METHOD §3, "Known truth per block").

Usage: ``python benchmarks/bench_block_truth.py [--against CHECKOUT] [--suite minibugs]
[--tasks 40] [--rounds 3] [--out benchmarks/out/block_truth.json]``

The blocks are those a policy writes: each candidate fix the environment lists for a train
task (``--try-scope``, as ``agent.try_scope``), applied to the task's tree, then a second
candidate of another seed function where the list has one, and the gold tree turned back into
the task's (the bugs planted again: harmful), each labelled against the suite's observed
mutants, as the rollout worker labels them. Each checkout's code runs in its own process on the
same blocks (read from this checkout's frozen suite), rounds alternated; a fresh process per
round, so a cache starts empty. Reports CPU seconds per block and whether the labels agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r"""
import json, pickle, sys, time
blocks_file = sys.argv[1]
from editcredit.data.block_truth import block_truth, observed_mutants
tasks, blocks = pickle.load(open(blocks_file, "rb"))
start = time.process_time()
mutants = observed_mutants(tasks.values())
labels = []
for task_id, before, after in blocks:
    truth = block_truth(tasks[task_id], before, after, mutants)
    labels.append([truth.label, list(truth.fixed_bugs), list(truth.broken_tests)])
cpu = time.process_time() - start
print(json.dumps({"cpu_s": cpu, "labels": labels}))
"""


def make_blocks(suite: str, n_tasks: int, try_scope: str) -> tuple[dict, list]:
    """(tasks by id, [(task id, before, after)]) from the frozen suite's first train tasks."""
    sys.path.insert(0, str(ROOT / "src"))
    from editcredit.agent.candidates import listed_candidates
    from editcredit.data.block_truth import apply_patch
    from editcredit.data.freeze import load_tasks

    tasks = load_tasks(ROOT / "data" / "frozen" / suite / "tasks.parquet")
    train = sorted((t for t in tasks if t.split == "train"), key=lambda t: t.instance_id)
    blocks = []
    for task in train[:n_tasks]:
        files = dict(task.files or {})
        gold = apply_patch(files, task.patch)
        for path in sorted(p for p in gold if gold[p] != files[p]):  # the bugs planted again
            blocks.append((task.instance_id, {path: gold[path]}, {path: files[path]}))
        listed = listed_candidates(task, try_scope)
        for cand in listed:
            lines = files[cand.path].split("\n")
            lines[cand.line - 1] = cand.new
            after = "\n".join(lines)
            blocks.append((task.instance_id, {cand.path: files[cand.path]}, {cand.path: after}))
            other = next((c for c in listed if c.function != cand.function), None)
            if other is not None and other.path == cand.path:
                second = after.split("\n")
                second[other.line - 1] = other.new
                blocks.append(
                    (task.instance_id, {cand.path: after}, {cand.path: "\n".join(second)})
                )
    return {t.instance_id: t for t in tasks}, blocks


def run(checkout: Path, blocks_file: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, blocks_file], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    import pickle
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--against", default="", help="a checkout to compare with (its src/)")
    ap.add_argument("--suite", default="minibugs")
    ap.add_argument("--try-scope", default="file")
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out" / "block_truth.json"))
    args = ap.parse_args()
    tasks, blocks = make_blocks(args.suite, args.tasks, args.try_scope)
    sides = {"this": ROOT}
    if args.against:
        sides["against"] = Path(args.against).resolve()
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        pickle.dump((tasks, blocks), f)
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    labels: dict[str, list] = {}
    start = time.monotonic()
    for _ in range(args.rounds):
        for name, checkout in sides.items():
            got = run(checkout, f.name)
            cpu[name].append(got["cpu_s"])
            labels[name] = got["labels"]
    os.unlink(f.name)
    result = {
        "suite": args.suite,
        "try_scope": args.try_scope,
        "tasks": args.tasks,
        "blocks": len(blocks),
        "labels": {
            lab: sum(x[0] == lab for x in labels["this"]) for lab in ("fix", "other", "harmful")
        },
        "cpu_s_per_block_best": {k: round(min(v) / len(blocks), 6) for k, v in cpu.items()},
        "cpu_s_rounds": cpu,
        "seconds": round(time.monotonic() - start, 1),
    }
    if args.against:
        result["same_labels"] = labels["this"] == labels["against"]
        result["ratio"] = round(min(cpu["against"]) / min(cpu["this"]), 2)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
