"""The PDF build: a clear message without TeX; a compiled paper from the fake tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from record_shapes import assert_record
from taskfactory import CONFIG
from taskfactory import REPO as _REPO

from editcredit.report.costs import BenchmarkTimes, CostRow, cost_rows, read_benchmark
from editcredit.report.paper import TexMissingError, build_pdf, log_warnings

REPO = Path(_REPO)
#: The default config's ``paper.latexmk``, as rule paper passes it
LATEXMK = CONFIG["paper"]["latexmk"]

HAS_TEX = shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None


def test_missing_tex_says_how_to_get_it(tmp_path):
    (tmp_path / "main.tex").write_text("x")
    with pytest.raises(TexMissingError, match=r"\./dev\.sh setup.*texlive-latex-recommended"):
        build_pdf(
            tmp_path / "main.tex", tmp_path / "main.pdf", tmp_path / "b", latexmk="no-tex-here"
        )


def test_log_warnings():
    log = "ok\nOverfull \\hbox (3.0pt too wide) in par\nLaTeX Warning: Reference `x' undefined\n"
    assert len(log_warnings(log)) == 2


@pytest.mark.skipif(not HAS_TEX, reason="TeX is installed by ./dev.sh setup")
def test_paper_compiles_without_warnings(resolved_tree):
    root = resolved_tree["root"]
    shutil.copy(REPO / "paper" / "main.tex", root / "paper" / "main.tex")
    warnings = build_pdf(
        root / "paper" / "main.tex", root / "paper" / "main.pdf", root / "build", latexmk=LATEXMK
    )
    assert warnings == []
    pdf = (root / "paper" / "main.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    # same sources, same bytes (fixed SOURCE_DATE_EPOCH, no timestamps in the figures)
    shutil.rmtree(root / "build")
    build_pdf(
        root / "paper" / "main.tex", root / "paper" / "again.pdf", root / "build", latexmk=LATEXMK
    )
    assert (root / "paper" / "again.pdf").read_bytes() == pdf


@pytest.mark.skipif(not HAS_TEX, reason="TeX is installed by ./dev.sh setup")
def test_paper_with_unresolved_slots_compiles_with_the_appendix_table(unresolved_tree):
    root = unresolved_tree["root"]
    shutil.copy(REPO / "paper" / "main.tex", root / "paper" / "main.tex")
    warnings = build_pdf(
        root / "paper" / "main.tex", root / "paper" / "main.pdf", root / "build", latexmk=LATEXMK
    )
    assert warnings == []
    assert "longtable" in (root / "paper" / "tables" / "unresolved.tex").read_text()


def test_benchmark_na_values(tmp_path):
    bench = tmp_path / "bench" / "rule_a"
    bench.mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (bench / "x.tsv").write_text(
        header + "2.0\t0:00:02\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n"
        "4.0\t0:00:04\t100\t1\t1\t1\t1\t1\t1\t3.0\n"
    )
    (tmp_path / "bench" / "rule_b.tsv").write_text(
        header + "1.0\t0:00:01\t50\t1\t1\t1\t1\t1\t1\t0.5\n"
    )
    assert read_benchmark(bench / "x.tsv") == {"s": 3.0, "cpu_time": 3.0, "max_rss": 100.0}
    assert_record(read_benchmark(bench / "x.tsv"), BenchmarkTimes)
    rows, total = cost_rows(
        tmp_path / "bench", sorted((tmp_path / "bench").rglob("*.tsv")), {"rule_a": 2}
    )
    assert_record(rows, list[CostRow])
    assert_record(total, CostRow)
    assert [r["rule"] for r in rows] == ["rule_a", "rule_b"]
    assert rows[0]["gpu_s"] == 6.0 and total["wall_s"] == 4.0 and total["peak_mib"] == 100.0
