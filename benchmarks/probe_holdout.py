"""Report a base policy's holdout figures, with the probe's sampling (the seed offset of rule
``probe``). Every holdout task, ``--samples`` each.

Reported, never tuned on (METHOD §11). It is for a recipe chosen on train and dev, when a full
build's probe is too slow to run. Groups of fewer than the probe's 8 samples undercount the
share of groups with unequal rewards: a group that is unequal stays unequal with more samples.

Usage::

    python benchmarks/probe_holdout.py MODEL_DIR [--samples 4] [--threads 2]
        [--set agent.candidates=true ...] [--out benchmarks/out/probe_holdout.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling benchmarks

from bench_base_variants import configured  # noqa: E402
from probe_train_dev import probe_rows, suite_tasks  # noqa: E402

from editcredit.agent.probe import probe_figures  # noqa: E402

HOLDOUT_KEYS = (
    "holdout_pass_at_1",
    "holdout_groups",
    "holdout_share_groups_with_reward_variance",
    "format_error_rate",
    "share_two_or_more_edit_blocks",
    "masked",
    "trajectories",
    "end_reasons",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("--samples", type=int, default=4, help="samples per holdout task")
    ap.add_argument("--threads", type=int, default=2, help="torch threads of generation")
    ap.add_argument("--set", action="append", default=[], help="config override: a.b=v")
    ap.add_argument("--out", default=str(HERE / "out" / "probe_holdout.json"))
    args = ap.parse_args()
    cfg = configured(args.set)
    start = time.monotonic()
    plan = [(suite_tasks(cfg, "holdout"), args.samples, "probe-holdout", 1)]
    (rows,) = probe_rows(args.model_dir, cfg, plan, args.threads)
    figures = {k: v for k, v in probe_figures([], rows).items() if k in HOLDOUT_KEYS}
    figures["samples_per_task"] = args.samples
    figures["seconds"] = round(time.monotonic() - start, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
