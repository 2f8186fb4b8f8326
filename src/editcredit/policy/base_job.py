"""The base model's inputs and the import_model job: the training tasks of a suite, and a local
HF directory linked in with its receipt. Training the tiny default is
:func:`editcredit.agent.base_job.base_model_job` (its experts play the agent's environment)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editcredit.audit.base_pin import check_pin
from editcredit.audit.identity import RECEIPT, write_identity
from editcredit.data.freeze import load_tasks

HF_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def training_tasks(
    tasks_path: str, controls_path: str | None, quarantine: Mapping[str, str] | None = None
):
    """Train-split tasks minus those whose controls were flagged (METHOD §7) and those the
    config quarantines (``training.quarantine``: task id -> reason; out of training, still
    evaluated). A quarantined id that is not a train task of the suite is refused, by name."""
    tasks = [t for t in load_tasks(tasks_path) if t.split == "train"]
    unknown = sorted(set(quarantine or {}) - {t.instance_id for t in tasks})
    if unknown:
        raise ValueError(
            f"config training.quarantine: {', '.join(unknown)} not a train task of {tasks_path}"
        )
    if controls_path:
        summary = json.loads(Path(controls_path).read_text())
        flagged = set(summary["flagged_ids"])
        tasks = [t for t in tasks if t.instance_id not in flagged]
    return [t for t in tasks if t.instance_id not in (quarantine or {})]


def import_model(source: str, out_dir: Path, cfg: dict[str, Any], name: str = "") -> str:
    """Link (or copy) a local HF directory into models/base/{model} and write its receipt;
    return the SHA256 of the receipt's file table (``cfg["receipt_sha256"]`` pins it: a
    different directory fails the import, naming both hashes, and leaves nothing behind)."""
    src = Path(source)
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"models: import path {src} is not a HF directory (no config.json)")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                dest = out_dir / path.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, dest)
                except OSError:
                    shutil.copy2(path, dest)
        receipt = write_identity(out_dir, config=cfg, extra={"imported_from": str(src.resolve())})
        where = f"models.{name or out_dir.name}.receipt_sha256"
        table = check_pin(receipt, cfg.get("receipt_sha256") or "", str(out_dir / RECEIPT), where)
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        raise
    print(f"{out_dir}: receipt file table SHA256 {table} (pin it as {where})")
    return table
