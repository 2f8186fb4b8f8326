"""Seconds per GRPO training step for each credit arm, split by phase, on this machine.

Every arm trains one segment of ``--steps`` steps from the base policy (models/base/tiny) with the
default config (Ray workers, docker sandbox) and the same seed, so the arms play the same first
step and differ only by their credit work; the counterfactual arms' extra cost over O is reported
as a ratio. Usage::

    python benchmarks/bench_train_step.py [--steps 2] [--arms O,B,M,E]

Writes benchmarks/out/train_step.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import pandas as pd

from editcredit.config import load_config
from editcredit.io.volatile import read_volatile
from editcredit.job_settings import SegmentSettings
from editcredit.rl.train_job import SegmentJob, train_segment_job
from editcredit.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--arms", default="O,B,M,E")
    args = ap.parse_args()
    config = load_config(ROOT / "config" / "config.yaml")
    config["sandbox"]["report_store"] = ""  # the gradings themselves are measured
    config["training"]["segment_steps"] = args.steps
    training = config["training"]
    suite = training["suite"]
    settings = SegmentSettings.from_settings(Settings.from_config(config))
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for arm in args.arms.split(","):
            step_dir = Path(tmp) / arm / f"step_{args.steps}"
            job = SegmentJob(
                run=f"{arm}-s42",
                step=args.steps,
                previous=str(ROOT / "models" / "base" / training["model"]),
                tasks=str(ROOT / "data" / "frozen" / suite / "tasks.parquet"),
                controls=str(ROOT / "results" / "controls" / suite / "summary.json"),
                out_dir=str(step_dir),
            )
            train_segment_job(
                job,
                settings,
                gpus=0,
                threads=2,
                config=config,
                gate_dir=str(Path(tmp) / "gates"),
            )
            m = pd.read_parquet(step_dir / "metrics.parquet")
            timing = read_volatile(step_dir / "segment.json")  # the clock's facts: the sidecar
            t = pd.DataFrame(timing["steps"])
            out[arm] = {
                "seconds_per_step": timing["seconds_per_step"],
                "rollout_and_grading_s": float(t["seconds_rollout"].mean()),
                "counterfactual_s": float(t["seconds_counterfactual"].mean()),
                "update_s": float(t["seconds_update"].mean()),
                "cf_sent_per_step": float(m["cf_sent"].mean()),
                "rollouts_per_step": float(m["rollouts"].mean()),
            }
    if "O" in out:
        for row in out.values():
            row["ratio_to_O"] = row["seconds_per_step"] / out["O"]["seconds_per_step"]
    result = {"steps": args.steps, "device": "cpu", "arms": out}
    dest = ROOT / "benchmarks" / "out" / "train_step.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
