"""Protocol freezing, the sealed-label reader and written-once gates: each refusal (METHOD §11)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.protocol.seal import (
    apply_gate_once,
    freeze_protocol,
    gate_path,
    read_sealed_labels,
    seal_path,
)
from editcredit.protocol.spec import ProtocolError, load_protocol

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def study(tmp_path):
    """A copy of the stop protocol, a labels file and the receipt/seal locations."""
    protocol = tmp_path / "config" / "protocols" / "stop.yaml"
    protocol.parent.mkdir(parents=True)
    shutil.copy(REPO / "config" / "protocols" / "stop.yaml", protocol)
    labels = tmp_path / "sealed.parquet"
    pq.write_table(pa.table({"point": [0, 1], "correct_now": [0, 1]}), labels)
    return {
        "protocol": protocol,
        "labels": labels,
        "receipt": tmp_path / "logs" / "protocols" / "stop.json",
        "seals": tmp_path / "logs" / "seals",
    }


def _read(s):
    return read_sealed_labels(
        s["labels"], protocol=s["protocol"], receipt=s["receipt"], seal_dir=s["seals"]
    )


def test_the_repository_protocol_loads():
    spec = load_protocol(REPO / "config" / "protocols" / "stop.yaml")
    assert spec["splits"]["sealed"] == "holdout"
    assert spec["gate"]["policy"] in spec["policies"]["learned"]


def test_first_read_writes_the_seal_with_both_hashes_and_the_order_of_events(study):
    frozen = freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    table = _read(study)
    assert list(table["correct_now"]) == [0, 1]
    seal = json.loads(seal_path("stop", study["seals"]).read_text())
    assert seal["protocol_sha256"] == frozen["protocol_sha256"]
    assert [len(h) for h in seal["labels_sha256"].values()] == [64]
    assert [e["event"] for e in seal["events"]] == [
        "protocol frozen",
        "first read of sealed labels",
    ]
    assert seal["events"][0]["at"] <= seal["events"][1]["at"]
    before = seal_path("stop", study["seals"]).read_bytes()
    _read(study)  # a second read under the same protocol: allowed, logged, the seal unchanged
    assert seal_path("stop", study["seals"]).read_bytes() == before
    assert len((study["seals"] / "stop.reads.jsonl").read_text().splitlines()) == 1


def _edit(s):
    s["protocol"].write_text(
        s["protocol"].read_text().replace("min_difference: 0.0", "min_difference: -0.1")
    )


REFUSALS = [
    # (name, what happens before the read, the words the refusal must carry)
    ("never frozen", lambda s: None, "not frozen"),
    (
        "edited after freezing",
        lambda s: (freeze_protocol(s["protocol"], s["receipt"], s["seals"]), _edit(s)),
        "changed after it was frozen",
    ),
]


@pytest.mark.parametrize("name,before,words", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_reading_sealed_labels_is_refused(study, name, before, words):
    before(study)
    with pytest.raises(ProtocolError, match=words):
        _read(study)
    assert not seal_path("stop", study["seals"]).exists()


def test_editing_a_frozen_protocol_after_the_first_read_is_refused_naming_the_seal(study):
    freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    _read(study)
    _edit(study)
    seal = seal_path("stop", study["seals"])
    with pytest.raises(ProtocolError, match="Editing a frozen protocol is refused") as err:
        freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    assert str(seal) in str(err.value)
    # and the read is refused too, even with a forged receipt of the edited file
    study["receipt"].unlink()
    with pytest.raises(ProtocolError):
        _read(study)


def test_refreezing_an_unread_protocol_is_allowed(study):
    freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    _edit(study)
    again = freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    assert _read(study) is not None
    assert (
        json.loads(seal_path("stop", study["seals"]).read_text())["protocol_sha256"]
        == (again["protocol_sha256"])
    )


def test_a_protocol_whose_sealed_split_is_fitted_on_is_refused(study):
    study["protocol"].write_text(
        study["protocol"].read_text().replace("fit: [train, dev]", "fit: [train, holdout]")
    )
    with pytest.raises(ProtocolError, match="also a fit split"):
        freeze_protocol(study["protocol"], study["receipt"], study["seals"])


def test_a_gate_is_written_once_and_a_different_recomputation_is_refused(study):
    failed = {"protocol_sha256": "a" * 64, "verdict": "fail", "difference": -0.01}
    first = apply_gate_once("stop", failed, study["seals"])
    assert apply_gate_once("stop", dict(failed), study["seals"]) == first  # same: reused
    path = gate_path("stop", study["seals"])
    before = path.read_bytes()
    for other in (
        {**failed, "verdict": "pass"},
        {**failed, "difference": 0.05},
    ):
        with pytest.raises(ProtocolError, match="applied once") as err:
            apply_gate_once("stop", other, study["seals"])
        assert str(path) in str(err.value)
    assert path.read_bytes() == before
    # another evaluation (key) gets its own record; the first stays
    other = apply_gate_once("stop", {**failed, "verdict": "pass"}, study["seals"], key="b" * 64)
    assert other["key"] == "b" * 64 and path.read_bytes() == before


def test_a_gate_record_needs_a_verdict(study):
    with pytest.raises(ProtocolError):
        apply_gate_once("stop", {"protocol_sha256": "a" * 64, "verdict": "maybe"}, study["seals"])


def test_the_receipt_the_seal_and_the_gate_are_their_typed_records(study):
    """The freeze receipt (as returned), the seal and the gate record (as written, sorted keys)
    have the keys of FreezeReceipt, Seal and GateRecord."""
    from record_shapes import assert_record

    from editcredit.protocol.seal import FreezeReceipt, GateRecord, Seal

    frozen = freeze_protocol(study["protocol"], study["receipt"], study["seals"])
    assert list(frozen) == list(FreezeReceipt.__annotations__)
    assert_record(json.loads(study["receipt"].read_text()), FreezeReceipt, ordered=False)
    _read(study)
    assert_record(json.loads(seal_path("stop", study["seals"]).read_text()), Seal, ordered=False)
    gate = apply_gate_once("stop", {"protocol_sha256": "a" * 64, "verdict": "fail"}, study["seals"])
    assert list(gate) == list(GateRecord.__annotations__)
    written = json.loads(gate_path("stop", study["seals"]).read_text())
    assert_record(written, GateRecord, ordered=False)
