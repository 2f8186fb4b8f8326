"""The shared names of editcredit.records: each defined once, every other place derived from it,
and a member written to JSON or Parquet gives the same bytes as its plain string."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit import layout
from editcredit.records import ARM_NAMES, Arm, CreditReason
from editcredit.rl import config as rl_config
from editcredit.rl.credit import ARM_QUERIES_CF, CREDIT_ARMS
from editcredit.stats.credit import NOT_QUERIED

ROOT = Path(__file__).resolve().parents[1]


def test_the_arms_are_methods_four_in_order():
    assert ARM_NAMES == ("O", "B", "M", "E")
    assert all(type(name) is str for name in ARM_NAMES)


def test_the_credit_registry_holds_one_function_per_arm_under_its_plain_name():
    assert tuple(CREDIT_ARMS) == ARM_NAMES
    assert tuple(ARM_QUERIES_CF) == ARM_NAMES
    assert all(type(name) is str for name in CREDIT_ARMS)


def test_the_training_config_and_the_run_names_take_their_arms_from_the_enum():
    assert rl_config.ARMS == ARM_NAMES
    assert layout.RUN_REGEX == "[OBME]-s[0-9]+"
    for arm in Arm:
        assert layout.is_run(f"{arm}-s42")


def test_the_schema_lists_the_same_arms():
    """Each arm list of the schema (a comparison's side may also be the base policy)."""
    schema = (ROOT / "config" / "schema.yaml").read_text()
    lists = [
        [x.strip() for x in line.split("enum: [", 1)[1].split("]")[0].split(",")]
        for line in schema.splitlines()
        if "enum: [O" in line
    ]
    assert lists
    for found in lists:
        assert tuple(x for x in found if x != layout.BASE_EVAL_MODEL) == ARM_NAMES


def test_the_ledger_reasons_keep_their_strings():
    assert NOT_QUERIED == CreditReason.NOT_QUERIED == "not queried (rate)"
    assert type(NOT_QUERIED) is str
    assert [r.value for r in CreditReason] == [
        "",
        "no eligible block",
        "original report unavailable",
        "counterfactual report unavailable",
        "not queried (rate)",
    ]


def test_a_member_writes_the_bytes_of_its_string():
    for member in [*Arm, *CreditReason]:
        assert json.dumps({"x": member}) == json.dumps({"x": member.value})
        assert f"{member}" == str(member) == member.value
        schema = pa.schema([("x", pa.string())])
        assert _parquet([{"x": member}], schema) == _parquet([{"x": member.value}], schema)


def _parquet(rows, schema) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buffer, compression="zstd")
    return buffer.getvalue()


def test_the_figures_colour_each_arm():
    from editcredit.report.figures import ARM_COLORS

    assert tuple(ARM_COLORS) == ARM_NAMES


def test_the_controls_stay_out_of_the_arms_and_write_their_strings():
    from editcredit.records import CONTROL_ARM_NAMES, ControlArm
    from editcredit.rl.credit import CONTROL_ARMS

    assert CONTROL_ARM_NAMES == tuple(CONTROL_ARMS) == ("T",)
    assert not set(CONTROL_ARM_NAMES) & set(ARM_NAMES)
    assert "T" not in layout.RUN_REGEX  # the study's run names take the arms only
    for member in ControlArm:
        assert json.dumps({"x": member}) == json.dumps({"x": member.value})
        assert type(CONTROL_ARM_NAMES[0]) is str
