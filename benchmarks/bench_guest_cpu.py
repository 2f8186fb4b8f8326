"""CPU seconds of one warm grading inside the sandbox, for two checkouts' guest code side by side.

Wall-clock gradings per second (``bench_grading.py``) move with whatever else the machine runs;
CPU seconds move much less. This benchmark prepares the gold-patch gradings of the first
``--tasks`` tasks of the frozen minibugs suite once, with this checkout's host code (the trees,
sentinels, per-test limits and requests a docker sandbox would send), then runs them through
each checkout's guest runner in a container of the sandbox image, the way the warm server runs
them (one forked child per grading), in alternating rounds. Per grading it reports the CPU
milliseconds of the runner (the parent that watches the test process), of the forked test
process, and the wall milliseconds. Every grading must observe its tests with no tampering
record, or the benchmark fails. Usage::

    python benchmarks/bench_guest_cpu.py --against /path/to/other/checkout [--tasks 20]
        [--rounds 3] [--reps 2]

Writes benchmarks/out/guest_cpu.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from editcredit.config import load_config
from editcredit.data.freeze import load_tasks
from editcredit.sandbox.base import TEST_ENV, RunRequest, RunResult, Sandbox
from editcredit.sandbox.limits import GoldTimes, LimitSettings, limit_settings

ROOT = Path(__file__).resolve().parents[1]

#: Runs inside the container: the warm server's warm-up, then every request ``reps`` times.
INSIDE = """
import json, os, resource, sys, time
sys.path.insert(0, "/grader")
import runner
runner.warm_up()
names = sorted(os.listdir("/cap"))
reqs = [json.load(open("/cap/%s/request.json" % n)) for n in names]
reps = int(sys.argv[1])

def run(req):
    os.makedirs("/tmp/out", exist_ok=True)
    runner.run_request(req, warm=True)
    text = open("/tmp/out/observations.jsonl").read()
    if "tampering" in text or "item_end" not in text:
        raise SystemExit("grading of %s: no clean observation" % req["workspace"])

def clock():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, time.perf_counter()

for req in reqs[:3]:
    run(req)
before = clock()
for _ in range(reps):
    for req in reqs:
        run(req)
after = clock()
n = reps * len(reqs)
print(json.dumps({k: round(1000 * (after[i] - before[i]) / n, 2)
                  for i, k in enumerate(("runner_cpu_ms", "test_cpu_ms", "wall_ms"))}))
"""


class _Capture(Sandbox):
    """A sandbox that prepares each grading as the docker backend would, and keeps it."""

    def __init__(self, out: Path, timeout_factor: float, limits: LimitSettings) -> None:
        super().__init__(timeout_factor, None, limits)
        self.out, self.count = out, 0

    def _run(self, request: RunRequest) -> RunResult:
        where = self.out / f"{self.count:03d}"
        self.count += 1
        shutil.copytree(request.workspace, where / "tree")
        guest = {
            "workspace": f"/cap/{where.name}/tree",
            "out_dir": "/tmp/out",
            "tests": request.tests,
            "env": TEST_ENV,
            "nonce": request.nonce,
            "timeout_s": request.timeout_s,
            **request.guest_fields(),
        }
        (where / "request.json").write_text(json.dumps(guest))
        return RunResult("not_run", None, "")


def capture(out: Path, tasks: int) -> None:
    config = load_config(ROOT / "config" / "config.yaml")
    settings = {**config["sandbox"]["test_limits"], "measure_gold": False}
    box = _Capture(out, config["sandbox"]["timeout_factor"], limit_settings(settings))
    for task in load_tasks(ROOT / "data" / "frozen" / "minibugs" / "tasks.parquet")[:tasks]:
        box.gold_times.put(task.instance_id, GoldTimes(0.05, {}))  # the floors
        box.grade(task, task.patch)


def measure(guest: Path, captured: Path, image: str, reps: int) -> dict:
    mounts = ["-v", f"{guest}:/grader:ro", "-v", f"{captured}:/cap:ro", "--tmpfs", "/tmp"]
    cmd = ["docker", "run", "--rm", "--network", "none", *mounts, image, "python3"]
    done = subprocess.run(
        [*cmd, "/grader/bench_inside.py", str(reps)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{guest}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    image = load_config(ROOT / "config" / "config.yaml")["sandbox"]["image"]
    sides = {"this": ROOT, "against": args.against.resolve()}
    with tempfile.TemporaryDirectory(prefix="guest-cpu-") as tmp:
        work = Path(tmp)
        capture(work / "cap", args.tasks)
        for name, checkout in sides.items():
            shutil.copytree(checkout / "src" / "editcredit" / "sandbox" / "guest", work / name)
            (work / name / "bench_inside.py").write_text(INSIDE)
        rounds = {name: [] for name in sides}
        for i in range(args.rounds):
            for name in sides:
                rounds[name].append(measure(work / name, work / "cap", image, args.reps))
                print(f"round {i + 1} {name:8s} {rounds[name][-1]}", flush=True)
    best = {n: {k: min(r[k] for r in rs) for k in rs[0]} for n, rs in rounds.items()}
    result = {
        "tasks": args.tasks,
        "gradings_per_round": args.tasks * args.reps,
        "against": str(sides["against"]),
        "rounds": rounds,
        "best": best,
        "cpu_ratio": round(
            (best["against"]["runner_cpu_ms"] + best["against"]["test_cpu_ms"])
            / (best["this"]["runner_cpu_ms"] + best["this"]["test_cpu_ms"]),
            3,
        ),
    }
    out = ROOT / "benchmarks" / "out" / "guest_cpu.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        json.dumps(result["best"], indent=2), "\ncpu ratio (against / this):", result["cpu_ratio"]
    )


if __name__ == "__main__":
    main()
