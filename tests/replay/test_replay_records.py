"""The replay's records: its summary (results/replay/summary.json) and a mismatch it reports
have the keys of ReplaySummary and Mismatch, in their order (the grading itself stubbed: the
docker tests re-grade for real)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from record_shapes import assert_record

from editcredit.io.hashing import sha256_text
from editcredit.replay import job
from editcredit.replay.job import ReplayMismatch, ReplaySummary, replay_study
from editcredit.rl.records import CREDIT_SCHEMA, ROLLOUT_SCHEMA

PATCH = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n"
GRADER = {"backend": "docker", "image_id": "sha256:0"}


def _report(patch: str, verdict: str = "valid_1") -> dict:
    return {
        "instance_id": "toy",
        "patch_sha256": sha256_text(patch),
        "outcome": "verdict",
        "verdict": verdict,
        "tests": {"t.py::a": {"status": "passed" if verdict == "valid_1" else "failed"}},
    }


def _segment(root: Path) -> Path:
    seg = root / "runs" / "B-s42" / "step_1"
    seg.mkdir(parents=True)
    rollouts = [
        {
            "rollout_key": f"B-s42:1:toy:{i}",
            "instance_id": "toy",
            "final_patch": PATCH,
            "report": json.dumps(_report(PATCH), sort_keys=True),
        }
        for i in range(2)
    ]
    pq.write_table(pa.Table.from_pylist(rollouts, schema=ROLLOUT_SCHEMA), seg / "rollouts.parquet")
    pq.write_table(pa.Table.from_pylist([], schema=CREDIT_SCHEMA), seg / "credit.parquet")
    (seg / "segment.json").write_text(json.dumps({"grader": GRADER}))
    return seg


@pytest.mark.parametrize("verdict", ["valid_1", "valid_0"])
def test_the_summary_and_its_mismatches_are_their_typed_records(tmp_path, monkeypatch, verdict):
    monkeypatch.setattr(job, "_regrade", lambda grade, task, patch: (_report(patch, verdict), 1))
    segments = [_segment(tmp_path)]
    if verdict == "valid_1":
        summary = replay_study(segments, {"toy": object()}, None, 1.0, 1, GRADER)
        assert summary["identical"] == summary["sampled"] == 2
    else:
        with pytest.raises(ReplayMismatch) as failure:
            replay_study(segments, {"toy": object()}, None, 1.0, 1, GRADER)
        summary = failure.value.record
        assert len(summary["mismatches"]) == 2
    assert_record(summary, ReplaySummary)
    assert summary["segment_graders"][0]["changes"] == []
