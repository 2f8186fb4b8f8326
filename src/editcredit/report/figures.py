"""The paper's figures (matplotlib, Agg backend), each written as PDF and PNG.

- :func:`training_curves`: reward, entropy and CF availability per training step, one line per
  run (colour: arm; line style: seed).
- :func:`holdout_curve`: the first eval set's pass@1 (or its bounds) against the training step:
  the base at step 0, the evaluated intermediate checkpoints, the endpoint; one line per run.
- :func:`task_differences`: per-task paired differences (sorted) of each comparison.
- :func:`bootstrap_figure`: the bootstrap distribution of the main comparison with its CI.

The figures read the JSON records only (``results/stats/training/{arm}.json``,
``results/stats/paired/{comparison}.json``, ``results/eval/{model}/{evalset}/scores.json``); they
never recompute a statistic. Files carry no
creation date, so the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from editcredit.layout import parse_run  # noqa: E402
from editcredit.records import Arm  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = [
    "bootstrap_figure",
    "curve_sizes",
    "holdout_curve",
    "save",
    "seed_styles",
    "task_differences",
    "training_curves",
]

Record = Mapping[str, Any]
ARM_COLORS = {
    Arm.O.value: "#6e6e6e",
    Arm.B.value: "#1f77b4",
    Arm.M.value: "#d62728",
    Arm.E.value: "#2ca02c",
}
SEED_STYLES = ("-", "--", ":", "-.")


def seed_styles(seeds) -> dict[int, str]:
    """Seed -> line style, by the seeds' numeric order: every figure draws a seed alike."""
    ordered = sorted({int(s) for s in seeds})
    return {s: SEED_STYLES[i % len(SEED_STYLES)] for i, s in enumerate(ordered)}


WIDTH_IN = 6.5  # the text width of the paper

_STYLE: dict[RcKeyType, Any] = {
    "font.size": 8.5,
    "axes.titlesize": 9,
    "axes.labelsize": 8.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,
    "svg.hashsalt": "editcredit",
}


def save(fig: plt.Figure, base: str | Path) -> list[Path]:
    """Write ``{base}.pdf`` and ``{base}.png`` (200 dpi) without timestamps; close the figure."""
    base = Path(base)
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.with_suffix(".pdf"), base.with_suffix(".png")]
    fig.savefig(paths[0], metadata={"CreationDate": None, "ModDate": None})
    fig.savefig(paths[1], dpi=200, metadata={"Software": None})
    plt.close(fig)
    return paths


def _series(values: Sequence[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _unresolved(ax: plt.Axes, comp: Record, what: str) -> None:
    """An empty panel that says why: unresolved slots, and the difference bounds."""
    lo, hi = 100 * comp["difference_lower"], 100 * comp["difference_upper"]
    ax.tick_params(left=False, labelleft=False, bottom=False, labelbottom=False)
    ax.text(
        0.5,
        0.5,
        f"unresolved slots:\n{what};\ndifference bounds\n[{lo:+.2f}, {hi:+.2f}] points",
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=7.5,
    )


def training_curves(training: Sequence[Record], base: str | Path) -> list[Path]:
    """Reward, entropy and CF availability by step; one line per run."""
    panels = (
        ("reward_mean", "Mean reward"),
        ("entropy", "Entropy (nats/token)"),
        ("cf_availability", "CF availability"),
    )
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 3, figsize=(WIDTH_IN, 2.3), layout="constrained")
        styles = seed_styles(parse_run(run).seed for rec in training for run in rec["curves"])
        for rec in training:
            color = ARM_COLORS.get(rec["arm"], "black")
            for run, curve in rec["curves"].items():
                style = styles[int(parse_run(run).seed)]
                for ax, (key, _) in zip(axes, panels, strict=True):
                    y = _series(curve[key])
                    if np.all(np.isnan(y)):
                        continue
                    ax.plot(curve["step"], y, style, color=color, marker="o", ms=2.5, lw=1.2)
        for ax, (key, title) in zip(axes, panels, strict=True):
            ax.set_title(title)
            ax.set_xlabel("Training step")
            ax.grid(alpha=0.3, lw=0.5)
            ax.xaxis.get_major_locator().set_params(integer=True)
            if key == "cf_availability":
                ax.set_ylim(-0.03, 1.03)
                silent = [r["arm"] for r in training if not r["health"]["cf_sent"]]
                if silent:
                    note = f"arm{'s' if len(silent) > 1 else ''} {', '.join(silent)}: no queries"
                    ax.text(0.02, 0.04, note, transform=ax.transAxes, fontsize=7)
        handles = [
            Line2D([], [], color=ARM_COLORS.get(r["arm"], "black"), lw=1.5, label=f"arm {r['arm']}")
            for r in training
        ] + [
            Line2D([], [], color="black", ls=style, label=f"seed {s}")
            for s, style in styles.items()
        ]
        fig.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)
        return save(fig, base)


def curve_points(scores: Sequence[Record]) -> dict[str, list[tuple[int, float, float, float]]]:
    """Per run, its (step, score, lower, upper) points in step order, each starting from the
    base's (step 0) when the base was evaluated; an unresolved model (no score) is drawn at the
    middle of its bounds, with the bounds as its bar.

    Raises:
        ValueError: when there are two base records (``run`` empty) or two records of one point.
    """
    base = [r for r in scores if not r["run"]]
    if len(base) > 1:
        raise ValueError(f"holdout curve: {len(base)} base score records, expected one")

    def point(rec: Record) -> tuple[int, float, float, float]:
        lo, hi = (float(x) for x in rec["bounds"])
        mid = float(rec["score"]) if rec["score"] is not None else (lo + hi) / 2
        return int(rec["step"]), mid, lo, hi

    runs: dict[str, list[tuple[int, float, float, float]]] = {}
    for rec in scores:
        if rec["run"]:
            runs.setdefault(rec["run"], [point(b) for b in base]).append(point(rec))
    for run, points in runs.items():
        steps = [p[0] for p in points]
        if len(set(steps)) != len(steps):
            raise ValueError(f"holdout curve: run {run} has two scores at one step {steps}")
        points.sort()
    return dict(sorted(runs.items()))


def curve_sizes(scores: Sequence[Record]) -> str:
    """What the curve's points were measured on: the tasks, and the samples per task of the
    base and endpoints and of the intermediate checkpoints when those differ."""

    def samples(recs: Sequence[Record]) -> str:
        return "/".join(str(n) for n in sorted({int(r["n_samples"]) for r in recs}))

    tasks = "/".join(str(n) for n in sorted({int(r["n_tasks"]) for r in scores}))
    claimed = [r for r in scores if not r.get("diagnostic")]
    between = [r for r in scores if r.get("diagnostic")]
    if not between or samples(between) == samples(claimed):
        return f"{tasks} tasks x {samples(scores)} samples"
    return (
        f"{tasks} tasks x {samples(claimed)} samples (base, endpoints), "
        f"x {samples(between)} (intermediate)"
    )


def holdout_curve(scores: Sequence[Record], base: str | Path) -> list[Path]:
    """Pass@1 on the first eval set against the training step, one line per run (colour: arm;
    line style: seed); bars are the bounds of models with unresolved slots; the title says
    the tasks and samples per task behind the points (``curve_sizes``)."""
    runs = curve_points(scores)
    evalset = scores[0]["evalset"] if scores else ""
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH_IN * 0.62, 2.4), layout="constrained")
        styles = seed_styles(parse_run(r).seed for r in runs)
        arms = list(dict.fromkeys(parse_run(r).arm for r in runs))
        for run, points in runs.items():
            parsed = parse_run(run)
            step, mid, lo, hi = (np.array(v, dtype=float) for v in zip(*points, strict=True))
            style = styles[int(parsed.seed)]
            color = ARM_COLORS.get(parsed.arm, "black")
            ax.plot(step, 100 * mid, style, color=color, marker="o", ms=2.5, lw=1.2)
            ax.vlines(step, 100 * lo, 100 * hi, color=color, lw=0.8, alpha=0.6)
        ax.set_xlabel("Training step (0: the base)")
        ax.set_ylabel(f"pass@1 on {evalset} (%)")
        if scores:
            ax.set_title(curve_sizes(scores), fontsize=7)
        ax.grid(alpha=0.3, lw=0.5)
        # the axes' default major locator is a MaxNLocator (AutoLocator), which takes integer=
        cast(MaxNLocator, ax.xaxis.get_major_locator()).set_params(integer=True)
        handles = [
            Line2D([], [], color=ARM_COLORS.get(a, "black"), lw=1.5, label=f"arm {a}") for a in arms
        ] + [
            Line2D([], [], color="black", ls=style, label=f"seed {s}")
            for s, style in styles.items()
        ]
        # beside the axes: inside, "best" still covered the lines of a crowded curve
        ax.legend(
            handles=handles, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1, 1)
        )
        return save(fig, base)


def task_differences(paired: Sequence[Record], base: str | Path) -> list[Path]:
    """Per-task differences (points, seed-averaged), sorted, one panel per comparison (at most
    three a row; the eval set in each title)."""
    with plt.rc_context(_STYLE):
        n = max(1, len(paired))
        ncols = min(3, n)
        nrows = -(-n // ncols)
        fig, grid = plt.subplots(
            nrows,
            ncols,
            figsize=(WIDTH_IN, 2.4 * nrows),
            layout="constrained",
            sharey=True,
            squeeze=False,
        )
        axes = list(grid.ravel())
        for ax in axes[len(paired) :]:
            ax.set_visible(False)
        for ax, rec in zip(axes, paired, strict=False):
            comp = rec["all"]
            title = rec["label"].replace(" - ", " $-$ ")
            seed = ", one seed" if rec["single_seed"] else ""
            ax.set_title(f"{title} ({rec['evalset']}{seed})", fontsize=9)
            ax.set_xlabel("Task (sorted by difference)")
            ax.axhline(0.0, color="black", lw=0.6)
            if not comp["resolved"]:
                _unresolved(ax, comp, "no per-task differences")
                continue
            d = np.sort(100 * np.asarray(comp["task_differences"], dtype=float))
            x = np.arange(1, d.size + 1)
            colors = np.where(d > 0, "#d62728", np.where(d < 0, "#1f77b4", "#9e9e9e"))
            ax.bar(x, d, width=1.0, color=colors, linewidth=0)
            ax.axhline(100 * comp["difference"], color="black", ls="--", lw=0.9)
            s = comp["sign"]
            wlt = f"{s['wins']}/{s['losses']}/{s['ties']}"
            ax.text(
                0.03,
                0.95,
                f"mean {100 * comp['difference']:+.2f}\nW/L/T {wlt}",
                transform=ax.transAxes,
                va="top",
                fontsize=7.5,
            )
            ax.set_xlim(0.5, d.size + 0.5)
        for row in grid:
            row[0].set_ylabel("Difference (points)")
        return save(fig, base)


def bootstrap_figure(rec: Record, base: str | Path) -> list[Path]:
    """Histogram of the bootstrap resample means of one comparison, with the CI and estimate."""
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH_IN * 0.62, 2.5), layout="constrained")
        dist = rec.get("bootstrap_distribution")
        comp = rec["all"]
        ax.set_title(f"{rec['label'].replace(' - ', ' $-$ ')}: bootstrap distribution")
        ax.set_xlabel("Difference (points)")
        if dist is None:
            _unresolved(ax, comp, "no bootstrap")
            return save(fig, base)
        edges = 100 * np.asarray(dist["edges"], dtype=float)
        counts = np.asarray(dist["counts"], dtype=float)
        ax.stairs(counts, edges, fill=True, color="#9ecae1", lw=0, zorder=2)
        ci = comp["primary_ci"]
        lo, hi, est = 100 * ci["lower"], 100 * ci["upper"], 100 * comp["difference"]
        level = round(100 * ci["level"])
        scheme = ci["scheme"].replace(" x ", " \u00d7 ")
        label = f"{level} % CI ({scheme}) [{lo:+.2f}, {hi:+.2f}]"
        ax.axvspan(lo, hi, color="#fdae6b", alpha=0.35, lw=0, zorder=1, label=label)
        ax.axvline(est, color="black", lw=1.2, label=f"estimate {est:+.2f}")
        ax.axvline(0.0, color="#636363", lw=0.8, ls=":", label="zero")
        ax.set_ylabel(f"Resamples (of {ci['n_resamples']:,})")
        ax.legend(loc="upper left", frameon=False, fontsize=7.5)
        ax.set_ylim(0, counts.max() * 1.35 if counts.size else 1)
        return save(fig, base)
