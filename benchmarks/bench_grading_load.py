"""Load never decides a score: the same gold and hostile patches graded unloaded and loaded.

Loaded: twice as many grading workers as cores plus ``--burners-per-core`` CPU burners per
core, with the gold times measured unloaded (as the control rule records them). Unloaded: one
worker per core. Patches: gold of the first ``--tasks`` tasks of the frozen minibugs suite; for
the first ``--loops`` of them the gold fix plus an infinite loop at the top of the fixed
function; and the crafted primes task's gold, loops (in called code, in a fixture, at import)
and every in-process forgery route of tests/hostilefactory.py. Each job is graded with the
evaluation's attempt rule: an infrastructure failure is regraded, at most ``--attempts`` in all.
The sandbox config is the repository's (config/config.yaml), per-test limits included.

Checks (exit status 1 when one fails): identical verdicts for every job in both conditions;
every gold patch scores 1 in both; every infrastructure failure was retried to a verdict
within the attempt limit. Usage::

    python benchmarks/bench_grading_load.py [--tasks 10] [--loops 3] [--suite-dir DIR]

Writes benchmarks/out/grading_load.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from pathlib import Path

from editcredit.agent.experts import apply_single_file_diff
from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch
from editcredit.sandbox.patches import diff_trees
from editcredit.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parents[1]
#: The utility weights of the repository config (the grader has no defaults).
_GRADING = load_config(ROOT / "config" / "config.yaml")["grading"]
WEIGHTS = (float(_GRADING["f_weight"]), float(_GRADING["g_weight"]))
sys.path.insert(0, str(ROOT / "tests"))

from hostilefactory import forgery_patches, loop_patches, make_primes_task  # noqa: E402


def burn() -> None:  # pragma: no cover - a CPU burner process
    while True:
        pass


def loop_patch(task: Task) -> str | None:
    """The gold fix plus ``while True: pass`` as the first statement of the fixed function."""
    module, _, function = task.meta.get("seed_function", "").partition(".")
    path = f"{module}.py"
    if path not in (task.files or {}):
        return None
    lines = apply_single_file_diff(task.files[path], task.patch).split("\n")
    heads = [i for i, line in enumerate(lines) if line.startswith(f"def {function}(")]
    if not heads:
        return None
    end = next(i for i in range(heads[0], len(lines)) if lines[i].rstrip().endswith(":"))
    lines[end + 1 : end + 1] = ["    while True:", "        pass"]
    return diff_trees({path: task.files[path]}, {path: "\n".join(lines)})


def jobs(suite_tasks: list[Task], n_tasks: int, n_loops: int) -> list[tuple[str, Task, str]]:
    out = []
    for task in suite_tasks[:n_tasks]:
        out.append((f"gold {task.instance_id}", task, task.patch))
    for task in suite_tasks[:n_loops]:
        patch = loop_patch(task)
        if patch:
            out.append((f"loop {task.instance_id}", task, patch))
    primes = make_primes_task()
    out.append((f"gold {primes.instance_id}", primes, primes.patch))
    out += [(f"loop {name}", primes, p) for name, p in loop_patches().items()]
    out += [(f"forgery {name}", primes, p) for name, p in forgery_patches().items()]
    return out


def grade_with_attempts(box, task: Task, patch: str, attempts: int) -> dict:
    """Grade; regrade after an infrastructure failure (at most ``attempts`` in all)."""
    tries = []
    for _ in range(attempts):
        start = time.monotonic()
        report = grade_patch(task, patch, box, *WEIGHTS)
        tries.append(
            {
                "outcome": report.outcome,
                "verdict": report.verdict,
                "reason": report.reason[:300],
                "seconds": round(time.monotonic() - start, 3),
            }
        )
        if report.outcome == "verdict":
            break
    return {"final": tries[-1], "attempts": tries}


def condition(name, work, sandbox_cfg, workers, burners, attempts, gold_times=None):
    """Grade every job with ``workers`` sandboxes while ``burners`` processes spin."""
    procs = [multiprocessing.Process(target=burn, daemon=True) for _ in range(burners)]
    for p in procs:
        p.start()
    try:
        with SandboxPool("docker", sandbox_cfg, workers, gold_times) as pool:
            start = time.monotonic()
            results = pool.map(
                lambda box, job: grade_with_attempts(box, job[1], job[2], attempts), work, name
            )
            wall = time.monotonic() - start
    finally:
        for p in procs:
            p.kill()
            p.join()
    return {
        "workers": workers,
        "burners": burners,
        "wall_s": round(wall, 1),
        "results": results,
        "gold_times": pool.gold_times,
    }


def summary(cond: dict, names: list[str]) -> dict:
    finals = [r["final"] for r in cond["results"]]
    tries = [a for r in cond["results"] for a in r["attempts"]]
    gold = [f for n, f in zip(names, finals, strict=True) if n.startswith("gold ")]
    return {
        "workers": cond["workers"],
        "burners": cond["burners"],
        "wall_s": cond["wall_s"],
        "jobs": len(finals),
        "verdicts": dict(Counter(f["verdict"] or f["outcome"] for f in finals)),
        "gold_scored_1": sum(f["verdict"] == "valid_1" for f in gold),
        "gold": len(gold),
        "infra_attempts": sum(a["outcome"] != "verdict" for a in tries),
        "jobs_retried": sum(len(r["attempts"]) > 1 for r in cond["results"]),
        "jobs_without_verdict": sum(f["outcome"] != "verdict" for f in finals),
        "max_seconds_per_attempt": max(a["seconds"] for a in tries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--loops", type=int, default=3)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--burners-per-core", type=int, default=1)
    parser.add_argument("--suite-dir", default=str(ROOT / "data" / "frozen" / "minibugs"))
    args = parser.parse_args()
    config = load_config(ROOT / "config" / "config.yaml")
    suite = load_tasks(Path(args.suite_dir) / "tasks.parquet")
    work = jobs(suite, args.tasks, args.loops)
    names = [n for n, _, _ in work]
    cores = os.cpu_count() or 1
    cfg = config["sandbox"]
    unloaded = condition("unloaded", work, cfg, cores, 0, args.attempts)
    # the gold times measured unloaded hold under load (as the control rule's would)
    burners = args.burners_per_core * cores
    loaded = condition(
        "loaded", work, cfg, 2 * cores, burners, args.attempts, unloaded["gold_times"]
    )
    mismatches = [
        {"job": n, "unloaded": u["final"]["verdict"], "loaded": v["final"]["verdict"]}
        for n, u, v in zip(names, unloaded["results"], loaded["results"], strict=True)
        if u["final"]["verdict"] != v["final"]["verdict"]
    ]
    result = {
        "cores": cores,
        "test_limits": cfg.get("test_limits"),
        "unloaded": summary(unloaded, names),
        "loaded": summary(loaded, names),
        "identical_verdicts": len(names) - len(mismatches),
        "mismatches": mismatches,
        "jobs": [
            {"job": n, "unloaded": u, "loaded": v}
            for n, u, v in zip(names, unloaded["results"], loaded["results"], strict=True)
        ],
    }
    out = ROOT / "benchmarks" / "out" / "grading_load.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "jobs"}, indent=1))
    ok = (
        not mismatches
        and all(s["gold_scored_1"] == s["gold"] for s in (result["unloaded"], result["loaded"]))
        and not result["unloaded"]["jobs_without_verdict"]
        and not result["loaded"]["jobs_without_verdict"]
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
