"""dev/compare_studies.py: what counts as the same study output, on small made-up studies."""

from __future__ import annotations

import importlib.util
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
    ],
)
def test_a_file_is_the_same_only_but_for_provenance(tmp_path, rel, a, b, kind):
    write(tmp_path / "a", rel, a)
    write(tmp_path / "b", rel, b)
    got, _ = compare.compare_file(tmp_path / "a" / rel, tmp_path / "b" / rel)
    assert got == kind


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
