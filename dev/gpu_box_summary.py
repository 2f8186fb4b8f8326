"""The figures docs/scale.md quotes of a GPU-box study, from what `dev/gpu_box.sh wait` brought
back: each job's start and end from the Snakemake log (`study.txt`), per rule the jobs, their
wall seconds and when the first began, the card's utilisation and memory (`smi.csv`).

    python dev/gpu_box_summary.py OUT_DIR

Prints Markdown. Times are seconds from the first job's start.
"""

from __future__ import annotations

import csv
import re
import statistics
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
STARTED = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")
ERROR = re.compile(r"^Error in rule (\w+):$")
WALL = re.compile(r"snakemake rc=(\d+) wall=(\d+)s")


@dataclass
class JobSpan:
    rule: str
    start: datetime
    end: datetime | None = None
    failed: bool = False


def parse_log(lines: list[str]) -> dict[int, JobSpan]:
    """jobid -> its rule, start and end (None: not finished) from a Snakemake log."""
    jobs: dict[int, JobSpan] = {}
    stamp: datetime | None = None
    pending: str | None = None  # the rule of a job whose jobid line is still to come
    for line in lines:
        line = line.rstrip("\n")
        if m := STAMP.match(line):
            stamp = datetime.strptime(" ".join(m[1].split()), "%a %b %d %H:%M:%S %Y")
        elif (m := STARTED.match(line)) and stamp is not None:
            pending = m[1]
        elif (m := JOBID.match(line)) and pending is not None and stamp is not None:
            jobs[int(m[1])] = JobSpan(pending, stamp)
            pending = None
        elif (m := FINISHED.match(line)) and stamp is not None and int(m[1]) in jobs:
            jobs[int(m[1])].end = stamp
        elif m := ERROR.match(line):
            for job in jobs.values():
                if job.rule == m[1] and job.end is None:
                    job.failed = True
    return jobs


def rule_rows(jobs: dict[int, JobSpan]) -> list[tuple[str, int, float, float, float, float]]:
    """Per rule, in order of its first start: (rule, jobs, first start, last end, shortest and
    longest job), seconds from the first job's start; unfinished jobs count to their start."""
    if not jobs:
        return []
    t0 = min(j.start for j in jobs.values())
    by_rule: dict[str, list[JobSpan]] = {}
    for job in sorted(jobs.values(), key=lambda j: j.start):
        by_rule.setdefault(job.rule, []).append(job)
    rows = []
    for rule, spans in by_rule.items():
        walls = [(j.end - j.start).total_seconds() for j in spans if j.end is not None]
        ends = [(j.end or j.start) - t0 for j in spans]
        rows.append(
            (
                rule,
                len(spans),
                (spans[0].start - t0).total_seconds(),
                max(e.total_seconds() for e in ends),
                min(walls, default=float("nan")),
                max(walls, default=float("nan")),
            )
        )
    return rows


def card(smi_csv: Path) -> tuple[int, float, float, float] | None:
    """(samples, mean utilisation %, mean and peak memory used MiB) of `nvidia-smi` samples."""
    util, mem = [], []
    with smi_csv.open() as f:
        for row in csv.reader(f):
            if len(row) < 3 or not row[1].strip()[:1].isdigit():
                continue
            util.append(float(row[1].split()[0]))
            mem.append(float(row[2].split()[0]))
    if not util:
        return None
    return len(util), statistics.mean(util), statistics.mean(mem), max(mem)


def main(out: Path) -> None:
    lines = (out / "study.txt").read_text(errors="replace").splitlines()
    jobs = parse_log(lines)
    walls = [m for line in lines if (m := WALL.search(line))]
    done = sum(j.end is not None for j in jobs.values())
    failed = sum(j.failed for j in jobs.values())
    print(f"jobs started {len(jobs)}, finished {done}, failed {failed}")
    if walls:
        print(f"snakemake rc={walls[-1][1]}, wall {walls[-1][2]} s")
    print("\n| rule | jobs | first start (s) | last end (s) | wall each (s) |")
    print("|---|---|---|---|---|")
    for rule, n, first, last, lo, hi in rule_rows(jobs):
        print(f"| `{rule}` | {n} | {first:.0f} | {last:.0f} | {lo:.0f}-{hi:.0f} |")
    if (out / "smi.csv").is_file() and (found := card(out / "smi.csv")):
        n, util, mean_mem, peak = found
        print(
            f"\ncard: {n} samples, utilisation {util:.0f} % on average, memory used "
            f"{mean_mem:,.0f} MiB on average, at most {peak:,.0f} MiB"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
