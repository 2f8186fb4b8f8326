"""Reading the stored gradings of a segment: which are replayable, and bad rows named."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.io.hashing import sha256_text
from editcredit.replay.stored import read_segment, read_study
from editcredit.rl.records import CREDIT_SCHEMA, ROLLOUT_SCHEMA

PATCH = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n"


def _report(patch: str, verdict: str | None = "valid_1", outcome: str = "verdict") -> str:
    body = {
        "instance_id": "toy",
        "patch_sha256": sha256_text(patch),
        "outcome": outcome,
        "verdict": verdict,
        "tests": {"t.py::a": {"status": "passed"}},
    }
    return json.dumps(body, sort_keys=True)


def _segment(root: Path, rollouts: list[dict], credit: list[dict]) -> Path:
    seg = root / "runs" / "B-s42" / "step_1"
    seg.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rollouts, schema=ROLLOUT_SCHEMA), seg / "rollouts.parquet")
    pq.write_table(pa.Table.from_pylist(credit, schema=CREDIT_SCHEMA), seg / "credit.parquet")
    return seg


def _rollout(key: str, patch: str, report: str) -> dict:
    return {"rollout_key": key, "instance_id": "toy", "final_patch": patch, "report": report}


def _query(key: str, patch: str, report: str) -> dict:
    return {"rollout_key": key, "instance_id": "toy", "cf_patch": patch, "cf_report": report}


def test_final_patches_and_sent_counterfactuals_are_read(tmp_path):
    seg = _segment(
        tmp_path,
        [
            _rollout("B-s42:1:toy:0", PATCH, _report(PATCH)),
            _rollout("B-s42:1:toy:1", "", _report("", "empty_patch")),
        ],
        [_query("B-s42:1:toy:0", "", _report("", "valid_0")), _query("B-s42:1:toy:1", "", "")],
    )
    got = {g.key: g for g in read_segment(seg)}
    assert sorted(got) == [
        "counterfactual:B-s42:1:toy:0",
        "final:B-s42:1:toy:0",
        "final:B-s42:1:toy:1",
    ]  # the query never sent (no report) is no grading
    assert got["final:B-s42:1:toy:0"].patch == PATCH
    assert got["final:B-s42:1:toy:0"].source.endswith("rollouts.parquet row 0")
    assert got["counterfactual:B-s42:1:toy:0"].tree == ("toy", sha256_text(""))


def test_a_report_of_another_patch_is_named_by_file_row_and_field(tmp_path):
    seg = _segment(tmp_path, [_rollout("B-s42:1:toy:0", PATCH, _report("other"))], [])
    with pytest.raises(ValueError, match=r"rollouts.parquet row 0 \(B-s42:1:toy:0\) field report"):
        read_segment(seg)


def test_a_report_that_is_not_json_is_named(tmp_path):
    seg = _segment(tmp_path, [], [_query("B-s42:1:toy:0", PATCH, "{not json")])
    with pytest.raises(ValueError, match=r"credit.parquet row 0 .* field cf_report: .*not JSON"):
        read_segment(seg)


def test_a_ledger_written_before_counterfactuals_were_stored_is_refused(tmp_path):
    seg = _segment(tmp_path, [], [])
    old = CREDIT_SCHEMA.remove(CREDIT_SCHEMA.get_field_index("cf_report"))
    pq.write_table(pa.Table.from_pylist([], schema=old), seg / "credit.parquet")
    with pytest.raises(ValueError, match=r"credit.parquet: no column cf_report .*rebuild"):
        read_segment(seg)


def test_one_grading_stored_twice_names_both_places(tmp_path):
    row = _rollout("B-s42:1:toy:0", PATCH, _report(PATCH))
    seg = _segment(tmp_path, [row, row], [])
    with pytest.raises(ValueError, match=r"stored twice: .*row 0 and .*row 1"):
        read_study([seg])
