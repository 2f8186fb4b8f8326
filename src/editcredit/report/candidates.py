"""The paper's table of the candidate list's coverage (the record of
``editcredit.agent.candidate_coverage.suite_coverage``): per suite, split and number of planted
bugs, the tasks whose gold fix tries of listed candidates reach, and the list's length."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from editcredit.report.latex import count, latex_escape, pct

__all__ = ["coverage_tex"]


def _length(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def coverage_tex(record: Mapping[str, Any]) -> str:
    """The paper's table of :func:`suite_coverage`'s record (label ``tab:candidates``)."""
    lines = [
        r"\begin{table}[tbp]",
        r"\centering",
        r"\small",
        r"\caption{The candidate list (\texttt{try} scope: "
        + latex_escape(record["try_scope"])
        + r"). Fix on list: tasks whose gold tree tries of listed candidates reach exactly "
        r"(under scope \texttt{function}: one candidate per planted bug); a task without it "
        r"cannot be solved by \texttt{try} alone. Length: candidates listed per task. "
        r"Computed from the frozen tasks and the environment's list function; nothing graded.}",
        r"\label{tab:candidates}",
        r"\begin{tabular}{llrrrrr}",
        r"\toprule",
        r"Suite & Split & Bugs & Tasks & Fix on list & Length (median) & Length (max) \\",
        r"\midrule",
    ]
    for k, (name, rows) in enumerate(record["suites"].items()):
        if k:
            lines.append(r"\midrule")
        for r in rows:
            if r["split"] == "all":
                lines.append(r"\addlinespace")
            bugs = "all" if r["bugs"] == 0 else count(r["bugs"])
            fix = f"{count(r['covered'])} ({pct(r['share'])})"
            cells = [latex_escape(name), latex_escape(r["split"]), bugs, count(r["tasks"]), fix]
            cells += [_length(r["median_length"]), count(r["max_length"])]
            lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)
