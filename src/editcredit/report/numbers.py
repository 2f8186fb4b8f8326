"""Numbers quoted in the paper's text, as generated LaTeX macros (the showyourwork idea).

``paper/tables/numbers.tex`` defines ``\\ecnum{key}``; the text writes ``\\ecnum{main.difference}``
instead of typing a number, so a rerun regenerates the prose. An undefined key is a LaTeX error
(the paper cannot silently print a stale or missing number). Keys:

- ``main.*``: the main comparison (``stats.main``); ``cmp.{name}.*``: every comparison.
- ``gate.*``, ``boot.*``: the claim gate and the bootstrap, as recorded in the comparison files.
- ``eval.*``, ``train.*``, ``suite.*``, ``code.*``: sizes of the study and its provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from editcredit.report.latex import (
    DASH,
    ci_points,
    count,
    half_width_points,
    latex_escape,
    points,
    pvalue,
)
from editcredit.settings import TrainingSettings

__all__ = ["comparison_numbers", "study_numbers"]

Record = Mapping[str, Any]


def _difference_text(c: Record) -> str:
    """The difference in points, or its bounds while slots are unresolved."""
    if c["resolved"]:
        return points(c["difference"], sign=True)
    lo, hi = points(c["difference_lower"], sign=True), points(c["difference_upper"], sign=True)
    return f"[{lo}, {hi}]"


def comparison_numbers(prefix: str, rec: Record) -> dict[str, str]:
    """Macros of one comparison record (``results/stats/{comparison}.json``)."""
    c = rec["all"]
    sign = c.get("sign") or {}
    gate = rec["gate"]
    wlt = DASH if not sign else f"{sign['wins']}/{sign['losses']}/{sign['ties']}"
    return {
        f"{prefix}.name": latex_escape(rec["comparison"]),
        f"{prefix}.label": latex_escape(rec["label"]),
        f"{prefix}.kind": latex_escape(rec["kind"]),
        f"{prefix}.evalset": latex_escape(rec["evalset"]),
        f"{prefix}.seeds": count(len(rec["seeds"])),
        f"{prefix}.tasks": count(rec["n_tasks"]),
        f"{prefix}.samples": count(rec["n_samples"]),
        f"{prefix}.resolved": "yes" if c["resolved"] else "no",
        f"{prefix}.difference": _difference_text(c),
        f"{prefix}.ci": ci_points(c["ci_seed_task"]),
        f"{prefix}.citask": ci_points(c["ci_task"]),
        f"{prefix}.ciprimary": ci_points(c["primary_ci"]),
        f"{prefix}.halfwidth": half_width_points(c["primary_ci"]),
        f"{prefix}.wlt": wlt,
        f"{prefix}.p": pvalue(sign.get("p_value")),
        f"{prefix}.gate": gate["verdict"].upper(),
        f"{prefix}.summary": _summary(c),
    }


def _summary(c: Record) -> str:
    """The comparison's result as a phrase: estimate and CI, or bounds while unresolved."""
    if not c["resolved"]:
        return (
            f"difference bounds of {_difference_text(c)} points (unresolved slots remain, so "
            "there is no point estimate and no CI)"
        )
    ci = c["primary_ci"]
    level = f"{100 * ci['level']:g}"
    what = "tasks resampled, one seed" if c["single_seed"] else "seed $\\times$ task bootstrap"
    return (
        f"a paired difference of {_difference_text(c)} points "
        f"({level}\\,\\% CI {ci_points(ci, half=True)}, {what})"
    )


def _short(text: str | None, n: int = 10) -> str:
    return latex_escape((text or "unknown")[:n])


def study_numbers(
    *,
    main: str,
    comparisons: Sequence[Record],
    scores: Sequence[Record],
    training: Sequence[Record],
    suites: Sequence[Record],
    code: Mapping[str, Any],
    config_sha256: str,
    design: TrainingSettings,
) -> dict[str, str]:
    """Every macro of ``numbers.tex`` (key -> LaTeX text), sorted by key; ``design`` is config
    ``training`` (the GRPO settings and the pool the paper states)."""
    by_name = {rec["comparison"]: rec for rec in comparisons}
    if main not in by_name:
        raise ValueError(f"stats.main {main!r} is not a configured comparison {sorted(by_name)}")
    out = comparison_numbers("main", by_name[main])
    for name, rec in by_name.items():
        out.update(comparison_numbers(f"cmp.{name}", rec))
    gate, boot = by_name[main]["gate"], by_name[main]["bootstrap"]
    out.update(
        {
            "gate.min": points(gate["min_difference"]),
            "gate.cilower": points(gate["ci_lower_threshold"]),
            "boot.resamples": count(boot["n_resamples"]),
            "boot.seed": str(int(boot["rng_seed"])),
            "boot.level": f"{100 * boot['level']:g}",
            "cmp.count": count(len(comparisons)),
            "cmp.passed": count(sum(rec["gate"]["passed"] for rec in comparisons)),
            "train.arms": count(len(training)),
            "train.runs": count(sum(len(t["runs"]) for t in training)),
            "train.endpoint": count(training[0]["endpoint_step"]) if training else DASH,
            "train.tokens": count(sum(t["health"]["generated_tokens"] for t in training)),
            "suite.tasks": count(sum(s["tasks"] for s in suites)),
            "suite.names": latex_escape(", ".join(s["suite"] for s in suites)),
            "code.commit": _short(code.get("git_commit")),
            "code.dirty": "yes" if code.get("git_dirty") else "no",
            "code.version": latex_escape(code.get("package_version", "")),
            "config.hash": _short(config_sha256, 12),
        }
    )
    grpo = design.grpo
    for key, name in (
        ("credit_lambda", "lambda"),
        ("credit_c", "c"),
        ("tasks_per_step", "tasks"),
        ("group_size", "group"),
        ("dppo_delta", "delta"),
    ):
        out[f"cfg.{name}"] = latex_escape(f"{grpo[key]:g}")
    pool = design.pool_size
    out["cfg.pool"] = f"at most {count(pool)}" if pool else "every eligible"
    screen = design.pool_screen
    if pool and screen.samples:
        out["cfg.pool.chosen"] = (
            f"screened by the base policy: of the first {count(screen.candidates)} eligible "
            "train tasks in SHA256 order of their ids, the first it solved in some but not all "
            f"of {count(screen.samples)} episodes"
        )
    else:
        out["cfg.pool.chosen"] = "the first eligible train tasks in SHA256 order of their ids"
    for rec in scores:
        e = rec["evalset"]
        out[f"eval.{e}.tasks"] = count(rec["n_tasks"])
        out[f"eval.{e}.samples"] = count(rec["n_samples"])
        out[f"eval.{e}.models"] = count(len(rec["models"]))
        out[f"eval.{e}.unresolved"] = count(sum(m["n_unresolved"] for m in rec["models"].values()))
    return dict(sorted(out.items()))
