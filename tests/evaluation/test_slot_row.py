"""The rows of slots.parquet and of the evaluation trajectory files: each record's keys are its
schema's columns (and what ``slots_rows`` writes)."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow.parquet as pq

from editcredit.evaluation.slots import SLOTS_SCHEMA, SlotRow, slots_rows, write_slots_parquet


def test_a_slot_row_is_the_schemas_columns_and_what_slots_rows_writes(tmp_path):
    assert list(SlotRow.__annotations__) == SLOTS_SCHEMA.names
    slot = SimpleNamespace(
        sample=0, verdict=1, state="decided", reason="valid", attempts=[1, 2], detail=""
    )
    files = [SimpleNamespace(instance_id="t", slots=[slot])]
    rows = slots_rows("base", "broad", files)
    assert [list(row) for row in rows] == [list(SlotRow.__annotations__)]
    path = tmp_path / "slots.parquet"
    write_slots_parquet(rows, path, {})
    assert pq.read_schema(path).names == list(SlotRow.__annotations__)


def test_an_eval_trajectory_row_is_its_files_columns():
    from editcredit.evaluation.attempts import EVAL_TRAJECTORY_SCHEMA, EvalTrajectoryRow

    assert list(EvalTrajectoryRow.__annotations__) == EVAL_TRAJECTORY_SCHEMA.names
