"""LaTeX output: escaping, number formats, the jinja2 environment, the provenance first line.

Every generated ``.tex`` file starts with ``% editcredit-provenance: {one-line json}``: the
provenance block (:func:`editcredit.io.provenance.provenance`) of the result files it was
rendered from, in the format ``editcredit verify`` reads (:func:`read_tex_provenance`).

Templates use LaTeX-friendly delimiters: ``<< value >>`` for values, ``<% for ... %>`` for
statements and ``<# ... #>`` for comments, so that braces and ``%`` stay plain LaTeX.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from editcredit.io.provenance import (
    TEX_PREFIX,
    atomic_write_text,
    provenance,
    tex_provenance_line,
)

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = [
    "PROVENANCE_PREFIX",
    "ci_points",
    "count",
    "half_width_points",
    "latex_escape",
    "make_env",
    "pct",
    "points",
    "provenance_line",
    "read_tex_provenance",
    "render_template",
    "write_tex",
]

PROVENANCE_PREFIX = TEX_PREFIX  # "% editcredit-provenance: ", the format editcredit verify reads
DASH = "---"  # an undefined value in a table

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_ESCAPE_RE = re.compile("|".join(re.escape(k) for k in _ESCAPES))


def latex_escape(text: Any) -> str:
    """``text`` with LaTeX's special characters escaped; `` - `` between names becomes a minus."""
    out = _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()], str(text))
    return out.replace(" - ", r" $-$ ")


def _undefined(x: Any) -> TypeIs[None]:
    """None or a non-finite float (shown as a dash). Typed as a test for None so that the
    checker reads the other branch, where every caller formats it, as a number."""
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def _minus(text: str) -> str:
    """A typographic minus for a leading '-' (LaTeX text mode renders '-' as a hyphen)."""
    return "$-$" + text[1:] if text.startswith("-") else text


def points(x: float | None, digits: int = 2, sign: bool = False) -> str:
    """A score or difference in percentage points (``100 * x``), e.g. ``+3.12``."""
    if _undefined(x):
        return DASH
    value = 100.0 * float(x)
    text = f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    if float(text) == 0.0:
        text = f"{0.0:.{digits}f}"  # rounds to zero: no sign, no "-0.00"
    return _minus(text)


def ci_points(ci: dict[str, Any] | None, digits: int = 2, half: bool = False) -> str:
    """``[lower, upper]`` of a CI record in points, or a dash; ``half``: followed by its
    half-width, ``[lower, upper] $\\pm$h`` (:func:`half_width_points`). ``ci`` is a
    :class:`~editcredit.stats.records.CIRecord` as read from a result file (a template passes
    it as read; older records lack ``half_width``)."""
    if not ci:
        return DASH
    text = f"[{points(ci['lower'], digits, True)}, {points(ci['upper'], digits, True)}]"
    return f"{text} {half_width_points(ci, digits)}" if half else text


def half_width_points(ci: dict[str, Any] | None, digits: int = 2) -> str:
    """The half-width of a CI record in points, ``$\\pm$3.10``, or a dash. Records written
    before ``half_width`` was stored get it from their ends."""
    if not ci:
        return DASH
    hw = ci.get("half_width")
    if hw is None:
        hw = (float(ci["upper"]) - float(ci["lower"])) / 2.0
    return f"$\\pm${points(hw, digits)}"


def pct(x: float | None, digits: int = 1) -> str:
    """A rate in percent, e.g. ``97.5\\%``."""
    if _undefined(x):
        return DASH
    return _minus(f"{100.0 * float(x):.{digits}f}") + r"\%"


def count(x: int | float | None) -> str:
    """An integer with thin-space thousands separators (``12\\,345``)."""
    if _undefined(x):
        return DASH
    return f"{int(round(float(x))):,}".replace(",", r"\,")


def fixed(x: float | None, digits: int = 2) -> str:
    """A plain number with ``digits`` decimals."""
    if _undefined(x):
        return DASH
    return _minus(f"{float(x):.{digits}f}")


def pvalue(p: float | None) -> str:
    """A p-value: three significant digits, or ``<0.001``."""
    if _undefined(p):
        return DASH
    return "$<$0.001" if p < 0.001 else f"{p:.3f}"


def p_equals(p: float | None) -> str:
    """A p-value as an equation: ``$p=0.007$`` or ``$p<0.001$``."""
    if _undefined(p):
        return "no $p$-value (all tasks tied)"
    return "$p<0.001$" if p < 0.001 else f"$p={p:.3f}$"


def budget_cap(x: float | None) -> str:
    """A budget cap: ``$\\infty$`` for 0 or none (no cap), else the number."""
    if _undefined(x) or not float(x):
        return r"$\infty$"
    return count(x) if float(x).is_integer() else fixed(x)


def make_env(template_dir: str | Path) -> jinja2.Environment:
    """A strict jinja2 environment over ``template_dir`` with the LaTeX delimiters and filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        block_start_string="<%",
        block_end_string="%>",
        variable_start_string="<<",
        variable_end_string=">>",
        comment_start_string="<#",
        comment_end_string="#>",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters.update(
        e=latex_escape,
        points=points,
        ci=ci_points,
        hw=half_width_points,
        pct=pct,
        count=count,
        fixed=fixed,
        pvalue=pvalue,
        peq=p_equals,
        budgetcap=budget_cap,
    )
    return env


def render_template(env: jinja2.Environment, name: str, **context: Any) -> str:
    """Render one template; errors name the template."""
    try:
        return env.get_template(name).render(**context)
    except (jinja2.TemplateError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"template {name}: {type(exc).__name__}: {exc}") from exc


def provenance_line(inputs: Iterable[str | Path], config: Any) -> str:
    """The first line of a generated .tex file: the provenance block as one-line JSON."""
    return tex_provenance_line(provenance(inputs, config)) + "\n"


def write_tex(path: str | Path, body: str, inputs: Iterable[str | Path], config: Any) -> None:
    """Write a generated .tex file: the provenance line, then ``body`` (atomically)."""
    atomic_write_text(path, provenance_line(inputs, config) + body)


def read_tex_provenance(path: str | Path) -> dict[str, Any]:
    """The provenance block of a generated .tex file (its first line). Open: the block
    ``io.provenance`` writes (inputs, code, config hash), read back whole by the checks."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    if not first.startswith(PROVENANCE_PREFIX):
        raise ValueError(f"{path}: first line is not an editcredit provenance comment")
    return json.loads(first[len(PROVENANCE_PREFIX) :])
