"""Export patches in SWE-bench's prediction format: one JSONL file per sample index.

SWE-bench's harness reads one prediction per ``instance_id`` (``instance_id``,
``model_name_or_path``, ``model_patch``), so the n samples of a task go to n files:
``predictions/sample_{k}.jsonl`` holds sample k of every task whose slot has a patch (a slot
whose every generation failed before a patch existed has none and is left out). The patch is
the one the ledger graded (the latest generation that produced a patch).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from editcredit.evaluation.ledger import GENERATION_KINDS
from editcredit.evaluation.slots import SlotRecord, TaskSlots
from editcredit.io.atomic import atomic_write_text


def slot_patch(slot: SlotRecord) -> str | None:
    """The patch of the slot's latest generation that produced one, else None."""
    for attempt in reversed(slot.attempts):
        if attempt.kind in GENERATION_KINDS and attempt.outcome == "patch":
            return attempt.patch
    return None


def write_predictions(
    files: Sequence[TaskSlots], model_name: str, n_samples: int, out_dir: str | Path
) -> list[Path]:
    """Write ``sample_{k}.jsonl`` for k in [0, n_samples); return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines: list[list[str]] = [[] for _ in range(n_samples)]
    for f in files:
        for slot in f.slots:
            patch = slot_patch(slot)
            if patch is None:
                continue
            record = {
                "instance_id": f.instance_id,
                "model_name_or_path": model_name,
                "model_patch": patch,
            }
            lines[slot.sample].append(json.dumps(record, sort_keys=True))
    paths = []
    for k, rows in enumerate(lines):
        path = out_dir / f"sample_{k}.jsonl"
        atomic_write_text(path, "".join(r + "\n" for r in rows))
        paths.append(path)
    return paths
