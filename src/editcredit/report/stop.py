"""The paper's stop-or-continue section (``paper/tables/stop_section.tex``) and its
success-cost figure (``paper/figures/stop_curve.{pdf,png}``), from ``results/stop/eval.json``
and the checkpoint receipts. Reads result files only; recomputes no statistic.

The table shows, on the sealed split, every fixed policy and rule and, per learned model, the
grid value that the fit split chose (the gate's criterion: best fit success within the protocol's
token cap); the figure shows every grid value on both splits. A failed gate is stated as a
negative result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from editcredit.report.latex import count, fixed, latex_escape, pct, points, write_tex
from editcredit.stats.bootstrap import half_width

KIND_ORDER = {"fixed": 0, "rule": 1, "learned": 2}
FAMILY_COLORS = {"logistic": "#1f77b4", "boosted_trees": "#d62728", "two_head": "#2ca02c"}


def family_choices(rec: Mapping[str, Any]) -> dict[str, str]:
    """Per learned model: the grid value chosen on the fit split (as the gate chooses)."""
    cap = rec["gate_choice"]["fit_token_cap"]
    fit = rec["fit"]
    out: dict[str, str] = {}
    for name, kind in rec["kinds"].items():
        if kind != "learned":
            continue
        fam = name.split("@")[0]
        best = out.get(fam)

        def key(n):
            return (fit[n]["tokens"] <= cap + 1e-9, fit[n]["success"], -fit[n]["tokens"], n)

        if best is None or key(name) > key(best):
            out[fam] = name
    return out


class StopTableRow(TypedDict):
    """One policy of the stop study's table: its fit success and, on the sealed split, its
    success, tokens and difference against the best fixed policy at matched cost."""

    name: str  # the policy
    kind: str  # fixed, agent, learned, ...
    fit_success: float
    success: float | None  # sealed (None: no sealed trajectories)
    tokens: float | None
    diff: float | None  # vs_fixed's difference (None: not compared)
    ci: list[float | None] | None  # its CI
    ref: str  # the fixed policy compared against ('' when none)


def table_rows(rec: Mapping[str, Any]) -> list[StopTableRow]:
    """The table's rows of ``results/stop/eval.json`` (stopping.jobs.StopEval): every fixed and
    agent policy, and of each learned family its fit-chosen member, in kind order."""
    sealed = rec.get("sealed") or {}
    chosen = set(family_choices(rec).values())
    names = [n for n, k in rec["kinds"].items() if k != "learned" or n in chosen]
    names.sort(key=lambda n: (KIND_ORDER[rec["kinds"][n]], n))
    rows: list[StopTableRow] = []
    for n in names:
        s = sealed.get(n, {})
        vs = s.get("vs_fixed") or {}
        rows.append(
            {
                "name": n,
                "kind": rec["kinds"][n],
                "fit_success": rec["fit"][n]["success"],
                "success": s.get("success"),
                "tokens": s.get("tokens"),
                "diff": vs.get("difference"),
                "ci": vs.get("ci"),
                "ref": vs.get("policy", ""),
            }
        )
    return rows


def _ci(ci: Sequence[float | None] | None) -> str:
    """``[lower, upper] $\\pm$h``: the CI in points and its half-width (METHOD §9)."""
    if not ci or ci[0] is None or ci[1] is None:
        return "--"
    hw = half_width(ci[0], ci[1])
    return f"[{points(ci[0], 1, True)}, {points(ci[1], 1, True)}] $\\pm${points(hw, 1)}"


def section_text(rec: Mapping[str, Any], receipts: Sequence[Mapping[str, Any]], budget) -> str:
    gate = rec["gate"]
    rows = table_rows(rec)
    trajs = sum(r["trajectories"] for r in receipts)
    pts = sum(r["points"] for r in receipts)
    trees = sum(r["distinct_trees"] for r in receipts)
    spent = sum(r["budget"]["spent"]["gradings"] for r in receipts)
    infra = sum(r["budget"]["infra_failures"] for r in receipts)
    fit_any: Mapping[str, Any] = next(iter(rec["fit"].values()), {})
    sealed_any: Mapping[str, Any] = next(iter((rec.get("sealed") or {}).values()), {})
    lines = [
        r"\section{Stop or continue: per-edit checkpoints}",
        r"\label{sec:stop}",
        "After each turn from its first edit on, an agent could submit the tree it has or go on. "
        "Under a protocol pre-registered and frozen before any label of its sealed split was "
        rf"read (\texttt{{{latex_escape(rec['protocol'])}}}, SHA256 "
        rf"\texttt{{{rec['protocol_sha256'][:16]}}}\ldots, frozen "
        rf"{latex_escape(rec['frozen_at'][:19])} UTC), "
        f"we graded every decision point of {count(trajs)} evaluation trajectories "
        f"({count(pts)} points, {count(trees)} distinct trees, each graded once by the strict "
        "grader) and evaluated stop policies exactly offline: a policy's success is the label of "
        "the tree where it stops, its cost the tokens generated until then. Learned policies are "
        f"fitted on the fit splits ({count(fit_any.get('trajectories', 0))} trajectories, "
        f"{count(fit_any.get('tasks', 0))} tasks) and evaluated on the sealed split "
        f"({count(sealed_any.get('trajectories', 0))} trajectories, "
        f"{count(sealed_any.get('tasks', 0))} tasks).",
        "",
    ]
    if gate["verdict"] in ("pass", "fail"):
        verdict = r"\textbf{" + gate["verdict"] + "}"
        lines.append(
            rf"The pre-registered gate compares \texttt{{{latex_escape(gate['candidate'])}}} "
            r"(chosen on the "
            rf"fit split) with the best fixed policy at matched cost, "
            rf"\texttt{{{latex_escape(gate['baseline'])}}}: "
            rf"on the sealed split the paired difference is {points(gate['difference'], 1, True)} "
            rf"points, {_ci(gate['ci'])} (task bootstrap); the gate (at least "
            rf"{points(gate['min_difference'], 1, True)} points with a CI lower bound above "
            rf"{points(gate['ci_lower_above'], 1, True)}) says {verdict}."
        )
        if gate["verdict"] == "fail":
            lines.append(
                " This is a negative result: the learned stop policy does not beat the best "
                "fixed policy at matched cost on the sealed split, and it is recorded as such "
                "(the gate is applied once)."
            )
    else:
        lines.append(f"The gate was not applied: {latex_escape(gate.get('reason', ''))}.")
    caps = {k: v for k, v in (budget or {}).items() if v}
    cap_text = ", ".join(f"{latex_escape(k.replace('_', ' '))} {count(v)}" for k, v in caps.items())
    lines += [
        f" The study's budget ({cap_text or 'no cap'}) was met: {count(spent)} gradings, "
        f"{count(infra)} failed on infrastructure (counted apart).",
        "",
        r"\begin{table}[!htbp]",
        r"\centering",
        r"\small",
        r"\caption{Stop policies on the sealed split: success (the checkpoint label where the "
        r"policy stops; mean over a task's trajectories, then over tasks), generated tokens until "
        r"the stop, and the paired difference to the best fixed policy that spends no more tokens "
        r"(percentage points, task-bootstrap 95\,\% CI). Learned policies: the grid value the fit "
        r"split chose. Fit success beside it for reference.}",
        r"\label{tab:stop}",
        r"\begin{tabular}{llrrrrl}",
        r"\toprule",
        r"Policy & Kind & Fit success & Success & Tokens & $\Delta$ vs fixed [CI] "
        r"& Fixed at matched cost \\",
        r"\midrule",
    ]
    for r in rows:
        delta = "--" if r["diff"] is None else f"{points(r['diff'], 1, True)} {_ci(r['ci'])}"
        ref = rf"\texttt{{{latex_escape(r['ref'])}}}" if r["ref"] else "--"
        lines.append(
            rf"\texttt{{{latex_escape(r['name'])}}} & {r['kind']} & {pct(r['fit_success'])} & "
            rf"{pct(r['success'])} & {fixed(r['tokens'], 1)} & {delta} & {ref} \\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
        "",
        r"\begin{figure}[!htbp]",
        r"\centering",
        r"\includegraphics[width=\textwidth]{stop_curve.pdf}",
        r"\caption{Success against generated tokens for every stop policy and grid value, on the "
        r"fit splits and the sealed split; learned models as lines over their grid, fixed "
        r"policies as squares, rules as triangles, the agent's own submit as a star.}",
        r"\label{fig:stop}",
        r"\end{figure}",
        "",
    ]
    return "\n".join(lines)


def stop_figure(rec: Mapping[str, Any], base: str | Path) -> list[Path]:
    import matplotlib.pyplot as plt

    from editcredit.report.figures import _STYLE, WIDTH_IN, save

    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(WIDTH_IN, 2.6), sharey=True)
        for ax, split in zip(axes, ("fit", "sealed"), strict=True):
            table = rec.get(split) or {}
            ax.set_title(f"{split} split")
            ax.set_xlabel("generated tokens until the stop")
            fams: dict[str, list[tuple[float, float]]] = {}
            labels: dict[tuple[float, float], list[str]] = {}
            for name, row in table.items():
                kind = rec["kinds"][name]
                x, y = row["tokens"], 100 * row["success"]
                if kind == "learned":
                    fams.setdefault(name.split("@")[0], []).append((x, y))
                elif name == "agent_submit":
                    ax.plot(x, y, "*", color="black", ms=9, label="agent's submit")
                elif kind == "fixed":
                    ax.plot(x, y, "s", color="#444444", ms=4, zorder=3)
                    labels.setdefault((round(x, 6), round(y, 6)), []).append(name)
                else:
                    ax.plot(x, y, "^", color="#999999", ms=4, zorder=3)
            for i, ((x, y), names) in enumerate(sorted(labels.items())):  # one per position
                ax.annotate(
                    ", ".join(sorted(names)),
                    (x, y),
                    fontsize=6,
                    xytext=(3, 3 if i % 2 == 0 else -9),
                    textcoords="offset points",
                )
            for fam, pts in sorted(fams.items()):
                pts.sort()
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    "-o",
                    ms=2.5,
                    lw=1,
                    alpha=0.85,
                    zorder=2,
                    color=FAMILY_COLORS.get(fam),
                    label=fam,
                )
            if not table:
                ax.text(0.5, 0.5, "no trajectories", transform=ax.transAxes, ha="center")
        axes[0].set_ylabel("success (%)")
        axes[0].legend(loc="lower right", frameon=False)
        fig.tight_layout()
        return save(fig, base)


def stop_report_job(
    *,
    eval_path: str,
    receipts: Sequence[str],
    budget: Mapping[str, Any] | None,
    out_section: str,
    out_pdf: str,
    out_png: str,
    config: Any,
) -> None:
    rec = json.loads(Path(eval_path).read_text())
    recs = [json.loads(Path(p).read_text()) for p in receipts]
    write_tex(out_section, section_text(rec, recs, budget), [eval_path, *receipts], config)
    paths = stop_figure(rec, Path(out_pdf).with_suffix(""))
    if Path(out_png) not in paths:
        raise ValueError(f"figure written to {paths}, not {out_png}")
