"""The provenance block: written by one module in three forms, read back from each."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from editcredit.io.identity import verify_identity, write_identity
from editcredit.io.provenance import (
    TEX_PREFIX,
    directory_digest,
    provenance,
    read_provenance,
    sha256_path,
    write_result_json,
    write_result_parquet,
    write_result_tex,
)


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data/a.txt").write_text("alpha\n")
    (tmp_path / "data/sub").mkdir()
    (tmp_path / "data/sub/b.bin").write_bytes(b"\x00\x01")
    return ["data/a.txt", "data"]


def test_block_holds_code_config_and_input_hashes(inputs):
    block = provenance(inputs, {"x": 1})
    assert set(block) == {"code", "config_sha256", "inputs"}
    assert set(block["code"]) == {
        "package_version",
        "git_commit",
        "git_dirty",
        "git_diff_sha256",
        "git_untracked_sha256",
        "git_untracked_files",
    }
    assert block["inputs"]["data/a.txt"] == hashlib.sha256(b"alpha\n").hexdigest()
    manual = directory_digest(
        [
            ("a.txt", hashlib.sha256(b"alpha\n").hexdigest()),
            ("sub/b.bin", hashlib.sha256(b"\x00\x01").hexdigest()),
        ]
    )
    assert block["inputs"]["data"] == manual == sha256_path("data")
    assert provenance(inputs, {"x": 2})["config_sha256"] != block["config_sha256"]
    assert provenance(["data"], {}, known={"data": "f" * 64})["inputs"]["data"] == "f" * 64


def test_missing_input_is_an_error_naming_it(inputs):
    with pytest.raises(FileNotFoundError, match="nope"):
        provenance(["nope"], {})


def test_json_parquet_and_tex_results_round_trip(inputs, tmp_path):
    block = write_result_json("r/x.json", {"v": 1}, inputs, {})
    assert json.loads((tmp_path / "r/x.json").read_text())["provenance"] == block
    assert read_provenance("r/x.json") == block
    table = pa.table({"a": [1, 2]})
    pblock = write_result_parquet("r/t.parquet", table, ["r/x.json"], {})
    assert read_provenance("r/t.parquet") == pblock
    assert pq.read_table("r/t.parquet").column("a").to_pylist() == [1, 2]
    tblock = write_result_tex(
        "paper/tables/t.tex", "\\begin{tabular}{l}\n\\end{tabular}\n", ["r/t.parquet"], {}
    )
    lines = (tmp_path / "paper/tables/t.tex").read_text().splitlines()
    assert lines[0].startswith(TEX_PREFIX) and lines[1] == "\\begin{tabular}{l}"
    assert read_provenance("paper/tables/t.tex") == tblock
    with pytest.raises(ValueError, match="already holds"):
        write_result_json("r/y.json", {"provenance": 1}, inputs, {})


def test_files_without_a_block_and_broken_blocks(tmp_path):
    (tmp_path / "plain.json").write_text('{"v": 1}')
    (tmp_path / "plain.tex").write_text("\\relax\n")
    pq.write_table(pa.table({"a": [1]}), tmp_path / "plain.parquet")
    for name in ("plain.json", "plain.tex", "plain.parquet"):
        assert read_provenance(tmp_path / name) is None
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        read_provenance(tmp_path / "bad.json")
    (tmp_path / "bad.tex").write_text(TEX_PREFIX + '{"inputs": 3}\n')
    with pytest.raises(ValueError, match="bad.tex.*inputs"):
        read_provenance(tmp_path / "bad.tex")


def test_identity_ignores_the_snakemake_timestamp_but_not_other_files(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"abc")
    write_identity(d, {"k": 1})
    (d / ".snakemake_timestamp").write_text("")
    assert verify_identity(d) == []
    (d / "extra.txt").write_text("x")
    (d / "model.safetensors").write_bytes(b"abd")
    assert verify_identity(d) == ["extra.txt", "model.safetensors"]


def test_a_volatile_sidecar_is_in_no_digest_and_its_absence_is_named(tmp_path):
    """Wall times beside a result change no directory digest and no identity receipt."""
    from editcredit.io.identity import file_hashes
    from editcredit.io.provenance import sha256_path
    from editcredit.io.volatile import read_volatile, write_volatile

    d = tmp_path / "step_1"
    d.mkdir()
    (d / "segment.json").write_text("{}")
    before = sha256_path(d)
    with pytest.raises(ValueError, match="segment.volatile.json.*missing"):
        read_volatile(d / "segment.json")
    written = write_volatile(d / "segment.json", {"seconds": 1.5})
    assert written == d / "segment.volatile.json"
    assert read_volatile(d / "segment.json") == {"seconds": 1.5}
    assert sha256_path(d) == before
    assert set(file_hashes(d)) == {"segment.json"}
    written.write_text("[1]")
    with pytest.raises(ValueError, match="a volatile sidecar is a JSON object"):
        read_volatile(d / "segment.json")
