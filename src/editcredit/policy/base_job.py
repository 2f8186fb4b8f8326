"""The base_model job: train the tiny default, or import a local HF directory, with receipt."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from editcredit.audit.identity import write_identity
from editcredit.data.freeze import load_tasks
from editcredit.policy.devices import bind_gpus
from editcredit.sandbox.pool import SandboxPool

HF_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def training_tasks(tasks_path: str, controls_path: str | None):
    """Train-split tasks minus those whose controls were flagged (METHOD §7)."""
    tasks = [t for t in load_tasks(tasks_path) if t.split == "train"]
    if controls_path:
        summary = json.loads(Path(controls_path).read_text())
        flagged = set(summary["flagged_ids"])
        tasks = [t for t in tasks if t.instance_id not in flagged]
    return tasks


def import_model(source: str, out_dir: Path, cfg: dict[str, Any]) -> None:
    """Link (or copy) a local HF directory into models/base/{model} and write its receipt."""
    src = Path(source)
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"models: import path {src} is not a HF directory (no config.json)")
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.rglob("*")):
        if path.is_file():
            dest = out_dir / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, dest)
            except OSError:
                shutil.copy2(path, dest)
    write_identity(out_dir, config=cfg, extra={"imported_from": str(src.resolve())})


def base_model_job(
    model_cfg: dict[str, Any],
    agent_cfg: dict[str, Any],
    sandbox_cfg: dict[str, Any],
    tasks_path: str | None,
    controls_path: str | None,
    out_dir: str,
    gpus: int,
) -> None:
    out = Path(out_dir)
    from editcredit.policy.base_training import expert_corpus, fit_base_model

    device = bind_gpus(int(gpus))
    tasks = training_tasks(tasks_path, controls_path)
    print(f"training the base policy on {len(tasks)} train tasks ({device})")
    workers = int(sandbox_cfg["workers"])
    start = time.monotonic()
    experts = {**model_cfg["experts"], "seed": model_cfg["seed"]}
    with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, workers) as pool:  # experts only
        corpus, names = expert_corpus(tasks, pool, experts, int(agent_cfg["max_turns"]), workers)
    seconds = time.monotonic() - start
    stats = fit_base_model(corpus, names, model_cfg, out, device, len(tasks), seconds)
    print(json.dumps(stats, indent=1))
