"""The study's stored gradings, read from the training segments.

A segment directory (``runs/{run}/step_{N}``) stores two kinds of grading:

- ``final``: each rollout's final patch and its grading report (``rollouts.parquet``: columns
  ``final_patch`` and ``report``);
- ``counterfactual``: each sent counterfactual query's patch (the final tree with the selected
  edit block reverted) and its report (``credit.parquet``: ``cf_patch`` and ``cf_report``; a
  query never sent stores neither).

A grading is *replayable* when its report is a verdict that a sandbox run decided: an empty
patch is valid 0 without any run, and an infrastructure failure is an attempt failure with no
statuses, so neither can be reproduced (they are counted apart, never sampled).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow.parquet as pq

from editcredit.io.hashing import sha256_text

__all__ = ["StoredGrading", "read_segment", "read_study", "unreplayable_reason"]

Kind = Literal["final", "counterfactual"]
_COLUMNS: dict[str, tuple[str, str, str]] = {
    # kind -> (file, patch column, report column)
    "final": ("rollouts.parquet", "final_patch", "report"),
    "counterfactual": ("credit.parquet", "cf_patch", "cf_report"),
}


@dataclass(frozen=True)
class StoredGrading:
    """One stored grading: where it is, the tree graded (task and patch) and its report."""

    key: str  # "{kind}:{rollout_key}", unique in the study
    kind: Kind
    source: str  # the file, with the row: "runs/B-s42/step_2/credit.parquet row 3"
    rollout_key: str
    instance_id: str
    patch: str
    report: dict[str, Any]

    @property
    def tree(self) -> tuple[str, str]:
        """(task, patch SHA256): gradings of one tree are re-graded once."""
        return (self.instance_id, self.report["patch_sha256"])


def unreplayable_reason(report: dict[str, Any]) -> str:
    """Why a stored report cannot be replayed ('' when it can)."""
    if report.get("outcome") != "verdict":
        return "infrastructure_failure"
    if report.get("verdict") == "empty_patch":
        return "empty_patch"
    return ""


def _report(text: Any, where: str) -> dict[str, Any]:
    try:
        report = json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where}: the stored report is not JSON: {exc}") from exc
    if not isinstance(report, dict) or "outcome" not in report or "patch_sha256" not in report:
        raise ValueError(f"{where}: the stored report lacks outcome or patch_sha256")
    return report


def _read_kind(segment: Path, kind: Kind) -> list[StoredGrading]:
    name, patch_col, report_col = _COLUMNS[kind]
    path = segment / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (a segment stores its {kind} gradings there)")
    columns = ["rollout_key", "instance_id", patch_col, report_col]
    present = set(pq.read_schema(path).names)
    missing = [c for c in columns if c not in present]
    if missing:
        raise ValueError(
            f"{path}: no column {', '.join(missing)} (written before the {kind} gradings were "
            "stored: rebuild the segment)"
        )
    out = []
    for i, row in enumerate(pq.read_table(path, columns=columns).to_pylist()):
        if kind == "counterfactual" and not row[report_col]:
            continue  # the query was not sent: nothing was graded
        where = f"{path} row {i} ({row['rollout_key']}) field {report_col}"
        report = _report(row[report_col], where)
        patch = row[patch_col] or ""
        if report["patch_sha256"] != sha256_text(patch):
            raise ValueError(
                f"{where}: the report's patch_sha256 {report['patch_sha256']} is not the SHA256 "
                f"of the stored {patch_col} ({sha256_text(patch)})"
            )
        if report.get("instance_id") not in (None, row["instance_id"]):
            raise ValueError(
                f"{where}: the report is of {report['instance_id']}, the row of "
                f"{row['instance_id']}"
            )
        out.append(
            StoredGrading(
                key=f"{kind}:{row['rollout_key']}",
                kind=kind,
                source=f"{path} row {i}",
                rollout_key=row["rollout_key"],
                instance_id=row["instance_id"],
                patch=patch,
                report=report,
            )
        )
    return out


def read_segment(segment: str | Path) -> list[StoredGrading]:
    """Every stored grading of one segment directory: final patches, then counterfactuals."""
    segment = Path(segment)
    return [*_read_kind(segment, "final"), *_read_kind(segment, "counterfactual")]


def read_study(segments: Iterable[str | Path]) -> list[StoredGrading]:
    """Every stored grading of the given segments; a key found twice is refused, naming both
    places."""
    out: list[StoredGrading] = []
    where: dict[str, str] = {}
    for segment in segments:
        for grading in read_segment(segment):
            if grading.key in where:
                raise ValueError(
                    f"replay: grading {grading.key} is stored twice: {where[grading.key]} and "
                    f"{grading.source}"
                )
            where[grading.key] = grading.source
            out.append(grading)
    return out
