"""LaTeX helpers: escaping, number formats, the provenance first line, the jinja2 environment."""

from __future__ import annotations

import json

import pytest

from editcredit.report.latex import (
    PROVENANCE_PREFIX,
    ci_points,
    count,
    fixed,
    latex_escape,
    make_env,
    p_equals,
    pct,
    points,
    pvalue,
    read_tex_provenance,
    render_template,
    write_tex,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("M - B", r"M $-$ B"),
        ("cf_unavailable_streak", r"cf\_unavailable\_streak"),
        ("50% & $5 #1 {x}", r"50\% \& \$5 \#1 \{x\}"),
        ("a~b^c\\d", r"a\textasciitilde{}b\textasciicircum{}c\textbackslash{}d"),
    ],
)
def test_latex_escape(text, expected):
    assert latex_escape(text) == expected


@pytest.mark.parametrize(
    "fn, value, expected",
    [
        (lambda x: points(x), 0.38594, "38.59"),
        (lambda x: points(x, sign=True), 0.03125, "+3.12"),
        (lambda x: points(x, sign=True), -0.0312, "$-$3.12"),
        (lambda x: points(x, sign=True), -0.00001, "0.00"),  # rounds to zero: no sign
        (lambda x: points(x), None, "---"),
        (lambda x: points(x), float("nan"), "---"),
        (lambda x: pct(x), 0.969, r"96.9\%"),
        (lambda x: count(x), 12345, r"12\,345"),
        (lambda x: fixed(x, 1), 10.55, "10.6"),
        (lambda x: pvalue(x), 0.0004, "$<$0.001"),
        (lambda x: pvalue(x), 0.0625, "0.062"),
        (lambda x: p_equals(x), 0.5, "$p=0.500$"),
        (lambda x: p_equals(x), None, "no $p$-value (all tasks tied)"),
    ],
)
def test_number_formats(fn, value, expected):
    assert fn(value) == expected


def test_ci_points():
    assert ci_points({"lower": -0.0125, "upper": 0.05}) == "[$-$1.25, +5.00]"
    assert ci_points(None) == "---"


def test_provenance_first_line_round_trip(tmp_path):
    src = tmp_path / "in.json"
    src.write_text("{}")
    out = tmp_path / "t.tex"
    write_tex(out, "\\begin{tabular}{l}\\end{tabular}\n", [src], {"a": 1})
    first, rest = out.read_text().split("\n", 1)
    assert first.startswith(PROVENANCE_PREFIX) and "\n" not in first
    block = json.loads(first[len(PROVENANCE_PREFIX) :])
    assert block == read_tex_provenance(out)
    assert list(block["inputs"]) == [str(src)]
    assert rest.startswith("\\begin{tabular}")


def test_provenance_line_readable_by_the_audit_reader(tmp_path):
    provenance = pytest.importorskip("editcredit.io.provenance")
    if not hasattr(provenance, "read_provenance"):
        pytest.skip("editcredit.io.provenance.read_provenance not available")
    src = tmp_path / "in.json"
    src.write_text("{}")
    out = tmp_path / "t.tex"
    write_tex(out, "x\n", [src], {})
    assert provenance.read_provenance(out) == read_tex_provenance(out)


def test_templates_are_strict(tmp_path):
    (tmp_path / "t.tex.j2").write_text("<< x|points >> & << missing >>\n")
    env = make_env(tmp_path)
    with pytest.raises(ValueError, match="t.tex.j2"):
        render_template(env, "t.tex.j2", x=0.5)
    (tmp_path / "u.tex.j2").write_text("{<< x|points(1, true) >>} 100\\%<# comment #>\n")
    assert render_template(env, "u.tex.j2", x=0.5) == "{+50.0} 100\\%"  # comment trimmed
