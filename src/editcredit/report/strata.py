"""The paper's table of the comparisons by number of bugs (the record of
``editcredit.stats.strata.strata_record``): M - B, M - O and the truth control T - O on the
whole eval set, its single-bug and its multi-bug tasks, with both CIs and the minimum
detectable difference; an absent stratum or comparison is a row that says so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from editcredit.report.latex import DASH, ci_points, count, fixed, latex_escape, points

__all__ = ["strata_tex"]

_COLUMNS = 8


def _label(entry: Mapping[str, Any]) -> str:
    label = latex_escape(entry["label"])
    return label + r" \emph{(control)}" if entry["control"] else label


def _row(first: str, part: Mapping[str, Any], n_seeds: int) -> str:
    cells = [first, latex_escape(part["label"])]
    comp = part["comparison"]
    if not part["present"]:
        why = latex_escape(part["absent"])
        return " & ".join(cells) + rf" & \multicolumn{{6}}{{l}}{{\emph{{absent: {why}}}}} \\"
    cells.append(f"{n_seeds}${{\\times}}${count(part['n_tasks'])}")
    if not comp["resolved"]:
        bounds = f"[{points(comp['difference_lower'], 2, True)}, "
        bounds += f"{points(comp['difference_upper'], 2, True)}]$^\\dagger$"
        return " & ".join([*cells, bounds, DASH, DASH, DASH, DASH]) + r" \\"
    sign = comp["sign"]
    seed_task = comp["ci_seed_task"]
    cells += [
        points(comp["difference"], 2, True),
        ci_points(seed_task) if seed_task else r"\emph{single seed}",
        ci_points(comp["ci_task"]),
        f"{sign['wins']}/{sign['losses']}/{sign['ties']}",
        points(comp["mdd"], 2),
    ]
    return " & ".join(cells) + r" \\"


def strata_tex(record: Mapping[str, Any]) -> str:
    """The paper's table of :func:`strata_record`'s record (label ``tab:strata``)."""
    power = record["power"]
    level = round(100 * record["bootstrap"]["level"])
    strata = ", ".join(
        f"{latex_escape(s['label'])}: {count(s['n_tasks'])}" for s in record["strata"]
    )
    lines = [
        r"\begin{table}[tbp]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{3pt}",
        r"\caption{Paired comparisons on the "
        + latex_escape(record["evalset"])
        + r" set by the number of bugs planted in a task (tasks: "
        + strata
        + r"), differences in percentage points. CI: "
        + f"{level}"
        + r"\,\% percentile bootstrap, seed $\times$ task and task only (seeds fixed). "
        r"MDD: minimum detectable difference at two-sided $\alpha="
        + fixed(power["alpha"], 2)
        + r"$ and "
        + f"{round(100 * power['power'])}"
        + r"\,\% power, $(z_{1-\alpha/2}+z_{\mathrm{power}})\,\mathrm{SE} = "
        + fixed(power["multiplier"], 3)
        + r"\,\mathrm{SE}$, SE the standard deviation of the seed $\times$ task bootstrap "
        r"means. T $-$ O: the truth control, outside the pre-registered comparisons and the "
        r"gate. $\dagger$: unresolved slots, bounds only.}",
        r"\label{tab:strata}",
        r"\begin{tabular}{llrrllrr}",
        r"\toprule",
        r"Comparison & Tasks & $S{\times}T$ & Difference & CI seed${\times}$task & CI task "
        r"& W/L/T & MDD \\",
        r"\midrule",
    ]
    for k, entry in enumerate(record["comparisons"]):
        if k:
            lines.append(r"\midrule")
        if entry["absent"]:
            why = latex_escape(entry["absent"])
            lines.append(
                _label(entry)
                + rf" & \multicolumn{{{_COLUMNS - 1}}}{{l}}{{\emph{{absent: {why}}}}} \\"
            )
            continue
        for i, part in enumerate(entry["strata"]):
            first = _label(entry) if i == 0 else ""
            lines.append(_row(first, part, len(entry["seeds"])))
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)
