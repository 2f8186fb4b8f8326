"""dev/compare_studies.py: what counts as the same study output, on small made-up studies."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

SPEC = importlib.util.spec_from_file_location(
    "compare_studies", Path(__file__).resolve().parents[1] / "dev" / "compare_studies.py"
)
compare = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(compare)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def parquet(root: Path, rel: str, values: list[int], meta: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"Y": values}).replace_schema_metadata({b"editcredit.provenance": meta})
    pq.write_table(table, path)


@pytest.mark.parametrize(
    ("rel", "a", "b", "kind"),
    [
        ("results/x.json", '{"a": 1}', '{"a": 1}', "identical"),
        ("results/x.json", '{"a": 1, "provenance": 1}', '{"a": 1, "provenance": 2}', "provenance"),
        ("results/x.json", '{"a": {"frozen_at": 1}}', '{"a": {"frozen_at": 2}}', "provenance"),
        ("results/x.json", '{"a": 1}', '{"a": 2}', "differs"),
        (
            "paper/tables/t.tex",
            "% editcredit-provenance: 1\nx",
            "% editcredit-provenance: 2\nx",
            "provenance",
        ),
        (
            "paper/tables/t.tex",
            "% editcredit-provenance: 1\nx",
            "% editcredit-provenance: 1\ny",
            "differs",
        ),
        ("runs/O-s1/w.bin", "a", "b", "differs"),
        # the hashes that name the code or config that wrote a file
        (
            "runs/x/segment.json",
            '{"grader": {"grader_sha256": "a"}}',
            '{"grader": {"grader_sha256": "b"}}',
            "identity",
        ),
        (
            "runs/x/identity.json",
            '{"config": {"agent": {}}}',
            '{"config": {"agent": {"k": 1}}}',
            "identity",
        ),
        (
            "results/e/t.json",
            '{"journal": "e/attempts/ab12/j"}',
            '{"journal": "e/attempts/cd34/j"}',
            "identity",
        ),
        (
            "results/e/t.json",
            '{"p": "e/attempts/ab12/t.parquet"}',
            '{"p": "e/attempts/cd34/t.parquet"}',
            "identity",
        ),
        # what the machine measured, and a memory address in a failure message
        (
            "results/c.json",
            '{"phases": [{"duration": 0.1}]}',
            '{"phases": [{"duration": 0.2}]}',
            "measured",
        ),
        (
            "results/c.json",
            '{"sandbox": {"limits": {"cpu": {"default_s": 0.25}}}}',
            '{"sandbox": {"limits": {"cpu": {"default_s": 0.5}}}}',
            "measured",
        ),
        (
            "results/c.json",
            '{"m": "<function f at 0x7f29865d5940>"}',
            '{"m": "<function f at 0x7f00aa000000>"}',
            "measured",
        ),
        (
            "results/c.json",
            '{"m": "<function f at 0x7f29865d5940>"}',
            '{"m": "<function g at 0x7f00aa000000>"}',
            "differs",
        ),
        # the worst kind of a file's differences is the file's kind
        ("results/c.json", '{"duration": 1, "Y": 1}', '{"duration": 2, "Y": 0}', "differs"),
        (
            "results/c.json",
            '{"duration": 1, "model_sha256": "a"}',
            '{"duration": 2, "model_sha256": "b"}',
            "measured",
        ),
        # a journal's attempts in another order are the same journal
        (
            "results/e/j.jsonl",
            '{"attempt": {"instance_id": "a"}}\n{"attempt": {"instance_id": "b"}}',
            '{"attempt": {"instance_id": "b"}}\n{"attempt": {"instance_id": "a"}}',
            "identical-after-sort",
        ),
        (
            "results/e/j.jsonl",
            '{"attempt": {"instance_id": "a", "Y": 1}}',
            '{"attempt": {"instance_id": "a", "Y": 0}}',
            "differs",
        ),
        (
            "paper/tables/n.tex",
            "\\@namedef{ecn@code.commit}{b1a2}\nx",
            "\\@namedef{ecn@code.commit}{80c3}\nx",
            "identity",
        ),
        (
            "paper/tables/s.tex",
            "frozen 2026-12-06T08:44:00 UTC, x",
            "frozen 2026-12-06T13:13:17 UTC, x",
            "provenance",
        ),
        (
            "paper/tables/s.tex",
            "frozen 2026-12-06T08:44:00 UTC, x",
            "frozen 2026-12-06T13:13:17 UTC, y",
            "differs",
        ),
        ("paper/tables/costs.tex", "a & 1.0", "a & 2.0", "measured"),
    ],
)
def test_a_file_is_the_same_only_but_for_provenance(tmp_path, rel, a, b, kind):
    write(tmp_path / "a", rel, a)
    write(tmp_path / "b", rel, b)
    got, _ = compare.compare_file(tmp_path / "a" / rel, tmp_path / "b" / rel)
    # a journal whose lines differ only in order compares as the same (the bytes differ)
    assert got == ("provenance" if kind == "identical-after-sort" else kind)


def test_parquet_metadata_is_provenance_and_values_are_not(tmp_path):
    parquet(tmp_path / "a", "results/r.parquet", [1, 0], b"one")
    parquet(tmp_path / "b", "results/r.parquet", [1, 0], b"two")
    parquet(tmp_path / "c", "results/r.parquet", [1, 1], b"one")
    assert (
        compare.compare_file(tmp_path / "a/results/r.parquet", tmp_path / "b/results/r.parquet")[0]
        == "provenance"
    )
    assert compare.compare_file(
        tmp_path / "a/results/r.parquet", tmp_path / "c/results/r.parquet"
    ) == (
        "differs",
        "column Y",
    )


def test_volatile_and_benchmark_files_are_left_out_and_one_sided_files_fail(tmp_path):
    write(tmp_path / "a", "results/s.volatile.json", "1")
    write(tmp_path / "b", "results/s.volatile.json", "2")
    write(tmp_path / "a", "results/benchmarks/x.json", "1")
    write(tmp_path / "a", "runs/O-s1/only.json", "{}")
    report = compare.compare_studies(tmp_path / "a", tmp_path / "b")
    assert report["only_before"] == ["runs/O-s1/only.json"]
    assert report["differs"] == []
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "a")]) == 0


def test_a_stored_report_in_a_parquet_column_is_compared_key_by_key(tmp_path):
    def report(message: str, verdict: str) -> str:
        return json.dumps({"sandbox": {"m": message}, "verdict": verdict})

    for side, message, verdict in (
        ("a", "<f at 0x7f01>", "pass"),
        ("b", "<f at 0x7f02>", "pass"),
        ("c", "<f at 0x7f02>", "fail"),
    ):
        path = tmp_path / side / "runs/r.parquet"
        path.parent.mkdir(parents=True)
        pq.write_table(pa.table({"report": [report(message, verdict)]}), path)
    a, b, c = (tmp_path / side / "runs/r.parquet" for side in "abc")
    assert compare.compare_file(a, b)[0] == "measured"
    assert compare.compare_file(a, c) == ("differs", "column report row 0 /verdict")


def test_lone_attempt_directories_of_two_studies_meet(tmp_path):
    write(tmp_path / "a", "results/eval/m/h/attempts/ab12/t.parquet", "x")
    write(tmp_path / "b", "results/eval/m/h/attempts/cd34/t.parquet", "x")
    report = compare.compare_studies(tmp_path / "a", tmp_path / "b")
    assert report["identical"] == 1
    assert report["only_before"] == report["only_after"] == []
