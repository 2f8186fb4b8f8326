"""Run the controls of a whole frozen suite: one JSON per task plus the suite summary."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editcredit.data.freeze import load_tasks
from editcredit.grading.controls import (
    ControlsSummary,
    run_controls,
    summarize,
    training_pool,
)
from editcredit.io.atomic import atomic_write_text
from editcredit.io.provenance import provenance, write_result_json
from editcredit.sandbox.pool import SandboxPool


def control_suite(
    tasks_path: str | Path,
    per_task_dir: str | Path,
    summary_path: str | Path,
    sandbox_cfg: dict[str, Any],
    grading_cfg: dict[str, Any],
    exclude_flagged: bool,
    config: Mapping[str, Any],
    pinned_sha256: str = "",
) -> ControlsSummary:
    tasks = load_tasks(tasks_path, pinned_manifest_sha256=pinned_sha256)
    suite = tasks[0].suite if tasks else Path(tasks_path).parent.name
    with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, int(sandbox_cfg["workers"])) as pool:
        f_weight, g_weight = float(grading_cfg["f_weight"]), float(grading_cfg["g_weight"])
        controls = pool.map(
            lambda box, t: run_controls(t, box, f_weight, g_weight), tasks, desc=f"controls {suite}"
        )
    per_task_dir = Path(per_task_dir)
    staging = per_task_dir.with_name(per_task_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    block = provenance([tasks_path], config)
    for control in controls:
        body = {**control, "provenance": block}
        atomic_write_text(
            staging / f"{control['instance_id']}.json",
            json.dumps(body, indent=2, sort_keys=True) + "\n",
        )
    summary = summarize(controls, suite)
    summary["training_pool"] = training_pool(
        [t.instance_id for t in tasks], summary, exclude_flagged
    )
    staging.rename(per_task_dir)
    write_result_json(summary_path, summary, [tasks_path], config)
    print(json.dumps({k: v for k, v in summary.items() if k != "training_pool"}, indent=1))
    return summary
