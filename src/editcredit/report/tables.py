"""Render the paper's tables (``paper/tables/*.tex``) from the result files.

Each table is a jinja2 template ``paper/templates/{name}.tex.j2`` rendered with a context from
:mod:`editcredit.report.context`; each output's first line is the provenance block of the
result files that table read. ``numbers.tex`` holds the numbers the text quotes
(:mod:`editcredit.report.numbers`) and ``findings.tex`` one generated paragraph per comparison.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editcredit.audit.provenance import code_version, config_hash
from editcredit.job_settings import TablesSettings
from editcredit.layout import parse_audit_json
from editcredit.report import context as ctx
from editcredit.report.costs import cost_rows
from editcredit.report.latex import make_env, render_template, write_tex
from editcredit.report.numbers import study_numbers

__all__ = ["TABLES", "TableInputs", "render_tables"]

#: Every table the paper includes (``paper/tables/{name}.tex``), in the order of the paper.
TABLES = (
    "suite",
    "training_health",
    "training_failures",
    "encounter",
    "credit",
    "scores",
    "comparisons",
    "findings",
    "audits",
    "costs",
    "replay",
    "numbers",
)


@dataclass
class TableInputs:
    """The result files the tables are rendered from (paths relative to the repository root).

    Attributes:
        controls: ``results/controls/{suite}/summary.json`` per suite.
        scores: ``results/stats/scores/{evalset}.json`` per eval set.
        comparisons: ``results/stats/{comparison}.json`` per comparison (gated).
        training: ``results/stats/training/{arm}.json`` per arm.
        audits: ``results/audits/{run}/step_{N}.json``.
        benchmarks: Snakemake benchmark TSVs (``results/benchmarks/{rule}/...``).
        benchmark_root: the directory the benchmark paths are under (rule = first part).
        replay: ``results/replay/summary.json`` (the replay check of stored gradings).
    """

    controls: Sequence[str | Path]
    scores: Sequence[str | Path]
    comparisons: Sequence[str | Path]
    training: Sequence[str | Path]
    audits: Sequence[str | Path] = ()
    benchmarks: Sequence[str | Path] = ()
    benchmark_root: str | Path = "results/benchmarks"
    segments: Sequence[str | Path] = ()  # endpoint segment directories (budget ledgers)
    replay: Sequence[str | Path] = ()  # results/replay/summary.json (the replay check)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def load(self, path: str | Path) -> Any:
        key = str(path)
        if key not in self._cache:
            try:
                self._cache[key] = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(f"{path}: cannot read the result file: {exc}") from exc
        return self._cache[key]

    def records(self, paths: Sequence[str | Path]) -> list[Any]:
        return [self.load(p) for p in paths]


def _ledgers(segments: Sequence[str | Path]) -> list[Path]:
    return [p for p in (Path(s) / "segment.json" for s in segments) if p.is_file()]


def budget_rows(segments: Sequence[str | Path], budget: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per run: the declared budget (config budgets.run) beside the spend its endpoint segment
    records (all its segments), and the attempts that failed on infrastructure, apart."""
    rows = []
    for path in _ledgers(segments):
        ledger = json.loads(path.read_text(encoding="utf-8")).get("budget")
        if not ledger:
            continue
        rows.append(
            {
                "run": ledger["scope"],
                "spent": ledger["spent"],
                "cap": {k: float(budget.get(k) or 0) for k in ledger["spent"]},
                "infra_failures": ledger["infra_failures"],
            }
        )
    return rows


def _audits(inputs: TableInputs) -> dict[tuple[str, int], Any]:
    out = {}
    for p in inputs.audits:
        out[parse_audit_json(p)] = inputs.load(p)
    return out


def render_tables(
    inputs: TableInputs,
    settings: TablesSettings,
    *,
    template_dir: str | Path,
    out_dir: str | Path,
    config: Any,
) -> dict[str, Path]:
    """Render every table of :data:`TABLES` into ``out_dir``; returns name -> path.

    Args:
        inputs: the result files.
        settings: the main comparison's name (config ``stats.main``), the arms in plan order
            (row order of the scores table), the runs in plan order (row order of the audit
            table), the GPUs each rule requests (GPU seconds of the cost table) and the run
            budget (config ``budgets.run``).
        template_dir: ``paper/templates``.
        out_dir: ``paper/tables``.
        config: the workflow config (its hash goes into every provenance line).
    """
    main, arm_order, run_order = settings.main, settings.arm_order, settings.run_order
    env = make_env(template_dir)
    out_dir = Path(out_dir)
    comparisons = inputs.records(inputs.comparisons)
    training = inputs.records(inputs.training)
    suites = inputs.records(inputs.controls)
    scores = inputs.records(inputs.scores)
    gate = next((c["gate"] for c in comparisons if c["comparison"] == main), None)
    costs, total = cost_rows(inputs.benchmark_root, inputs.benchmarks, settings.gpus_by_rule)
    numbers = study_numbers(
        main=main,
        comparisons=comparisons,
        scores=scores,
        training=training,
        suites=suites,
        code=code_version(),
        config_sha256=config_hash(config),
        training_cfg=config.get("training", {}) if isinstance(config, Mapping) else {},
    )
    every = [*inputs.controls, *inputs.scores, *inputs.comparisons, *inputs.training]
    plan: dict[str, tuple[dict[str, Any], list[str | Path]]] = {
        "suite": ({"suites": ctx.suite_context(suites)}, list(inputs.controls)),
        "training_health": ({"arms": ctx.health_context(training)}, list(inputs.training)),
        "training_failures": ({"arms": ctx.failures_context(training)}, list(inputs.training)),
        "encounter": ({"rows": ctx.encounter_context(training)}, list(inputs.training)),
        "credit": ({"arms": ctx.credit_context(training)}, list(inputs.training)),
        "scores": ({"groups": ctx.scores_context(scores, arm_order)}, list(inputs.scores)),
        "comparisons": (
            {"groups": ctx.comparisons_context(comparisons), "gate": gate},
            list(inputs.comparisons),
        ),
        "findings": (
            {"groups": ctx.comparisons_context(comparisons), "main": main},
            list(inputs.comparisons),
        ),
        "audits": (
            {
                "rows": ctx.audits_context(_audits(inputs), run_order),
                "exclusions": ctx.audit_exclusions(_audits(inputs)),
            },
            list(inputs.audits),
        ),
        "costs": (
            {
                "rows": costs,
                "total": total,
                "arms": ctx.health_context(training),
                "budgets": budget_rows(inputs.segments, settings.budget.to_dict()),
            },
            [*inputs.benchmarks, *inputs.training, *_ledgers(inputs.segments)],
        ),
        "replay": (
            {"replays": [ctx.replay_context(r) for r in inputs.records(inputs.replay)]},
            list(inputs.replay),
        ),
        "numbers": ({"numbers": numbers}, every),
    }
    written = {}
    for name in TABLES:
        context, read = plan[name]
        body = render_template(env, f"{name}.tex.j2", **context)
        path = out_dir / f"{name}.tex"
        write_tex(path, body, read, config)
        written[name] = path
    return written
