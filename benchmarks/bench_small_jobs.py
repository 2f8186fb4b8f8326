"""Start-up cost of the study's small jobs: one fresh Python importing each rule's job module.

A small job (eval_model_scores, paired, compare, audit_params, the report rules...) does a
second or less of work; the rest of its time is the interpreter, Snakemake's ``script:``
preamble (``from snakemake import script`` and the unpickled job object) and the import of
``editcredit.jobs.<rule>`` with everything it pulls in (torch, scipy.stats, pandas,
matplotlib...). This times, in a fresh interpreter per sample, the preamble's import and each
rule's job-module import, and weighs them by the default study's job counts.

Each ``--src`` is a source tree put first on ``PYTHONPATH`` (e.g. a ``git archive`` of an
older commit's ``src``, to compare before and after); the trees are sampled in turn (A B A B)
so that a load change on the shared machine falls on both alike. Without ``--src`` the
installed ``editcredit`` is timed.

Usage::

    python benchmarks/bench_small_jobs.py [--src DIR ...] [--repeats 5] [--rule NAME ...]

Writes benchmarks/out/small_jobs.json and prints a table (median seconds per job, and the
study total: median x the rule's job count).
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
OUT = ROOT / "benchmarks" / "out" / "small_jobs.json"

# The default study's jobs of each small rule (the ``Job stats`` of ``snakemake -n`` on the
# default config: 7 runs x 2 segments, 11 models, 4 arms, 8 comparisons).
STUDY_JOBS: dict[str, int] = {
    "eval_model_scores": 23,
    "audit_params": 14,
    "paired": 8,
    "compare": 8,
    "training_analysis": 4,
    "evalset_scores": 2,
    "audit_summary": 1,
    "eval_plan": 1,
    "freeze_protocol": 1,
    "replay": 1,
    "stop_policies": 1,
    "stop_eval": 1,
    "stop_report": 1,
    "render_tables": 1,
    "figures": 1,
    "paper": 1,
}
PREAMBLE = "from snakemake import script"


def time_import(statement: str, src: str | None) -> float:
    """Wall seconds of a fresh interpreter running ``statement`` (start-up included)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], env=env, check=True, cwd=ROOT)
    return time.perf_counter() - start


def measure(rules: list[str], sources: list[str | None], repeats: int) -> dict[str, dict]:
    """Per source tree: per rule (and the preamble), the sampled seconds."""
    samples: dict[str, dict[str, list[float]]] = {
        str(s): {r: [] for r in ["bare", "preamble", *rules]} for s in sources
    }
    statements = {"bare": "pass", "preamble": PREAMBLE}
    statements |= {r: f"import editcredit.jobs.{r}" for r in rules}
    for _ in range(repeats):
        for name, statement in statements.items():
            for src in sources:  # A B A B: neighbours in time, alike in load
                samples[str(src)][name].append(time_import(statement, src))
    return samples


def summarize(samples: dict[str, list[float]], rules: list[str]) -> dict:
    median = {name: statistics.median(xs) for name, xs in samples.items()}
    per_job = {r: median[r] for r in rules}
    return {
        "median_s": median,
        "study_total_s": sum(per_job[r] * STUDY_JOBS.get(r, 1) for r in rules),
        "samples_s": samples,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", default=[], help="source tree (repeatable)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rule", action="append", default=[], help="default: every small rule")
    args = ap.parse_args()
    rules = args.rule or list(STUDY_JOBS)
    sources: list[str | None] = [str(Path(s).resolve()) for s in args.src] or [None]
    samples = measure(rules, sources, args.repeats)
    result = {
        "repeats": args.repeats,
        "study_jobs": {r: STUDY_JOBS.get(r, 1) for r in rules},
        "load_average": os.getloadavg(),
        "sources": {str(s): summarize(samples[str(s)], rules) for s in sources},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    names = ["bare", "preamble", *rules]
    print(
        f"{'rule':20s} {'jobs':>4s} "
        + " ".join(f"{Path(str(s)).parent.name[:14]:>14s}" for s in sources)
    )
    for name in names:
        cells = " ".join(f"{result['sources'][str(s)]['median_s'][name]:14.2f}" for s in sources)
        print(f"{name:20s} {STUDY_JOBS.get(name, 0):4d} {cells}")
    totals = " ".join(f"{result['sources'][str(s)]['study_total_s']:14.1f}" for s in sources)
    print(f"{'study total (s)':20s} {'':4s} {totals}")


if __name__ == "__main__":
    main()
