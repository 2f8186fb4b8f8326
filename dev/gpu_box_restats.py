"""Recompute a GPU box's paired statistics here, from the slots and rollouts it brought back.

``dev/gpu_box.sh wait`` packs what a box's study computed into ``OUT/computed.tar.gz``: each
comparison's record (``results/stats/paired/*.json``), every evaluation's ``slots.parquet`` and
every segment's ``rollouts.parquet``. The statistics are a function of those files alone, so
this machine's ``paired_record`` over them must give the box's record, field for field (its
provenance aside). Usage::

    python dev/gpu_box_restats.py DIR     # DIR: where computed.tar.gz was unpacked

Prints one line per comparison and exits 1 where any differs (naming the first field).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from editcredit.layout import eval_slots
from editcredit.stats._records import to_plain
from editcredit.stats.comparisons import ComparisonSpec, paired_record
from editcredit.stats.loaders import read_slots, training_tasks


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The path of the first field where ``a`` and ``b`` differ (None: equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key} (present on one side only)"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{where} ({a!r} here, {b!r} on the box)"


def recompute(root: Path, record: dict[str, Any]) -> dict[str, Any]:
    """``record``'s comparison recomputed from the slots and rollouts under ``root``."""
    spec = ComparisonSpec(
        name=record["comparison"],
        arm_a=record["arm_a"],
        arm_b=record["arm_b"],
        seeds=tuple(record["seeds"]),
        evalset=record["evalset"],
    )
    slots = {m: read_slots(root / eval_slots(m, spec.evalset)) for m in spec.all_models}
    trained = {}
    for run_dir in sorted((root / "runs").glob("*")):
        rollouts = sorted(run_dir.glob("step_*/rollouts.parquet"))
        if rollouts:
            trained[run_dir.name] = training_tasks(rollouts)
    distribution = record.get("bootstrap_distribution") or {}
    boot = record["bootstrap"]
    out = paired_record(
        spec,
        slots,
        trained,
        n_resamples=int(boot["n_resamples"]),
        rng_seed=int(boot["rng_seed"]),
        level=float(boot["level"]),
        histogram_bins=len(distribution.get("counts", [])) or 60,
        n_samples=int(record["n_samples"]),
    )
    return json.loads(json.dumps(to_plain(out)))


def main(root: Path) -> int:
    records = sorted((root / "results" / "stats" / "paired").glob("*.json"))
    if not records:
        print(f"{root}: no results/stats/paired/*.json", file=sys.stderr)
        return 2
    differ = 0
    for path in records:
        box = json.loads(path.read_text(encoding="utf-8"))
        box.pop("provenance", None)
        found = first_difference(recompute(root, box), box)
        differ += found is not None
        print(f"{path.stem}: {'the same' if found is None else 'differs at ' + found}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
