"""The study's record of the credit against the known truth (rule credit_truth): the runs it
reads, the truth rows read back from the segments, and the arms' results pooled over their runs
(stats/credit_truth.py, stats/jobs.py)."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.data.block_truth import TRUTH_SCHEMA
from editcredit.rl.records import CREDIT_SCHEMA, write_table
from editcredit.stats.credit_truth import (
    EXPECTED_SIGN,
    SIGNS,
    credit_truth_record,
    credit_truth_runs,
    read_truth,
)
from editcredit.stats.jobs import credit_truth_job

PLANNED = {"O": ["O-s1"], "B": ["B-s1", "B-s2"], "M": ["M-s1"], "E": ["E-s1"], "T": ["T-s1"]}


@pytest.mark.parametrize(
    "plan, runs",
    [
        (PLANNED, ["B-s1", "B-s2", "M-s1"]),  # B then M: the arms with a counterfactual query
        ({"M": ["M-s3"], "O": ["O-s3"]}, ["M-s3"]),
        ({"O": ["O-s1"], "T": ["T-s1"]}, []),  # no arm with a query: nothing to read
    ],
)
def test_credit_truth_runs(plan, runs):
    assert credit_truth_runs(lambda arm: plan.get(arm, [])) == runs


def _truth(run, sample, block, label, tokens, step=1):
    return {
        "run": run,
        "step": step,
        "rollout_key": f"{run}:{step}:t:{sample}",
        "instance_id": "t",
        "block": block,
        "eligible": True,
        "label": label,
        "fixed_bugs": "0" if label == "fix" else "",
        "tokens": tokens,
    }


def _query(run, sample, D, L=10, l1=1.0, step=1):
    return {
        "run": run,
        "step": step,
        "rollout_key": f"{run}:{step}:t:{sample}",
        "instance_id": "t",
        "selected_block": 0,
        "available": True,
        "reason": "",
        "D": D,
        "L": L,
        "credit_l1": l1,
    }


TRUTH = pd.DataFrame(
    [
        _truth("B-s1", 0, 0, "fix", 4),
        _truth("B-s1", 0, 1, "other", 6),
        _truth("B-s2", 0, 0, "other", 5),
        _truth("M-s1", 0, 0, "fix", 2),
        _truth("M-s1", 1, 0, "harmful", 3),
        _truth("O-s1", 0, 0, "fix", 9),  # an arm without a query: its truth is not B's or M's
    ]
)
LEDGERS = {
    "B-s1": pd.DataFrame([_query("B-s1", 0, 1.0)]),  # fix, D > 0: 4 of 10 tokens on the fix
    "B-s2": pd.DataFrame([_query("B-s2", 0, 0.0, l1=0.0)]),  # other, D = 0
    "M-s1": pd.DataFrame([_query("M-s1", 0, 1.0, l1=2.0), _query("M-s1", 1, 0.5)]),
}


@pytest.mark.parametrize(
    "arm, runs, table, agreement, share, blocks",
    [
        (
            "B",
            ["B-s1", "B-s2"],
            {"fix": (0, 0, 1), "other": (0, 1, 0), "harmful": (0, 0, 0)},
            1.0,
            0.4,
            {"fix": 1, "other": 2, "harmful": 0},
        ),
        (
            "M",
            ["M-s1"],
            {"fix": (0, 0, 1), "other": (0, 0, 0), "harmful": (0, 0, 1)},
            0.5,
            2.0 / 3.0,
            {"fix": 1, "other": 0, "harmful": 1},
        ),
    ],
)
def test_credit_truth_record_pools_each_arms_runs(arm, runs, table, agreement, share, blocks):
    record = credit_truth_record(LEDGERS, TRUTH)
    assert list(record["arms"]) == ["B", "M"] and record["expected_sign"] == EXPECTED_SIGN
    found = record["arms"][arm]
    assert found["runs"] == runs and found["blocks"] == blocks
    expected = {k: dict(zip(SIGNS, v, strict=True)) for k, v in table.items()}
    assert found["table"] == expected
    assert found["agreement"] == pytest.approx(agreement)
    assert found["positive_mass_share"] == pytest.approx(share)


def test_an_arm_whose_runs_sent_no_query_has_an_empty_table():
    record = credit_truth_record({"M-s1": pd.DataFrame()}, read_truth([]))
    assert record["arms"]["M"]["agreement"] is None
    assert sum(sum(s.values()) for s in record["arms"]["M"]["table"].values()) == 0


def test_read_truth_keeps_the_schemas_columns(tmp_path):
    write_table([], TRUTH_SCHEMA, tmp_path / "empty.parquet")
    write_table([_truth("M-s1", 0, 0, "fix", 2)], TRUTH_SCHEMA, tmp_path / "one.parquet")
    assert list(read_truth([tmp_path / "empty.parquet"]).columns) == TRUTH_SCHEMA.names
    both = read_truth([tmp_path / "empty.parquet", tmp_path / "one.parquet"])
    assert both["label"].tolist() == ["fix"] and both["tokens"].tolist() == [2]


def test_the_job_reads_the_segments_ledgers_and_truth_rows(tmp_path):
    segments = []
    for run, ledger in LEDGERS.items():
        seg = tmp_path / "runs" / run / "step_1"
        seg.mkdir(parents=True)
        rows = [{**q, "cf_patch": "", "cf_report": ""} for q in ledger.to_dict("records")]
        pq.write_table(pa.Table.from_pylist(rows, schema=CREDIT_SCHEMA), seg / "credit.parquet")
        mine = TRUTH[TRUTH["run"] == run].to_dict("records")
        write_table(mine, TRUTH_SCHEMA, seg / "truth.parquet")
        segments.append(seg)
    out = tmp_path / "credit_truth.json"
    record = credit_truth_job(segments, out, config={})
    written = json.loads(out.read_text())
    assert len(written.pop("provenance")["inputs"]) == 2 * len(segments)
    assert written == json.loads(json.dumps(record))
    assert record["arms"]["B"]["positive_mass_share"] == pytest.approx(0.4)
    (segments[0] / "truth.parquet").unlink()  # a segment written before the truth rows
    with pytest.raises(FileNotFoundError, match="truth.parquet"):
        credit_truth_job(segments, out, config={})
