"""What the searching expert itself reaches: the ceiling of a student that imitates it.

Plays ``models.tiny.experts``' searching expert (it sees only what the agent sees:
agent/search_expert.py) through the real minibugs environment on every task of the chosen
splits, ``--episodes`` per task, and grades each final patch with the strict grader (hidden
FAIL_TO_PASS included). Prints, per split: the share resolved, the mean turns, and the share of
episodes with two or more tries. Train and dev by default: design choices are made on these;
``--splits holdout`` reports the holdout and must not be used to choose anything (METHOD §11).

    python benchmarks/bench_search_expert.py --set agent.candidates=true --set agent.max_turns=12
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_base_variants import configured, suite_paths  # noqa: E402

from editcredit.agent.environments import environment_factory  # noqa: E402
from editcredit.agent.search_expert import search_episode  # noqa: E402
from editcredit.data.freeze import load_tasks  # noqa: E402
from editcredit.grading.grader import grade_patch  # noqa: E402
from editcredit.sandbox.factory import make_sandbox  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", default=[], help="config override: a.b=v")
    ap.add_argument("--splits", nargs="+", default=["train", "dev"])
    ap.add_argument("--episodes", type=int, default=1, help="episodes per task")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    config = configured(args.set)
    experts = config["models"]["tiny"]["experts"]
    weights = {str(k): float(v) for k, v in experts["search_weights"].items()}
    turns = int(config["agent"]["max_turns"])
    tasks_path, _ = suite_paths(config)
    tasks = [t for t in load_tasks(tasks_path) if t.split in args.splits]
    sandbox = make_sandbox(config["sandbox"]["backend"], config["sandbox"])
    make_env = environment_factory(config["agent"], config["sandbox"])
    grading = config["grading"]
    seed = str(config["models"]["tiny"]["seed"])

    def play(job):
        task, k = job
        env = make_env(sandbox)
        # the corpus's seeding (agent/expert_corpus.py): the model's seed, the task, the episode
        rng = random.Random(f"{seed}:{task.instance_id}:{k}")
        _, actions = search_episode(
            env,
            task,
            rng,
            weights,
            turns,
            str(experts["fragment_style"]),
            int(experts["search_pool"]),
            seed,
        )
        report = grade_patch(
            task, env.final_patch(), sandbox, grading["f_weight"], grading["g_weight"]
        )
        tries = sum(a.startswith(("try ", "edit ")) for a in actions)
        return task.split, report.resolved, len(actions), tries

    jobs = [(t, k) for t in tasks for k in range(args.episodes)]
    clock = time.monotonic()
    with ThreadPoolExecutor(args.workers) as ex:
        results = list(ex.map(play, jobs))
    print(f"{len(jobs)} episodes, {time.monotonic() - clock:.0f} s; overrides: {args.set}")
    for split in args.splits:
        rows = [r for r in results if r[0] == split]
        if not rows:
            continue
        n = len(rows)
        print(
            f"{split:8s} episodes {n:4d}  resolved {sum(r[1] for r in rows) / n:6.1%}  "
            f"mean turns {sum(r[2] for r in rows) / n:4.1f}  "
            f">= 2 tries {sum(r[3] >= 2 for r in rows) / n:6.1%}"
        )


if __name__ == "__main__":
    main()
