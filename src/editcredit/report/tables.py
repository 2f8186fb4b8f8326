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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from editcredit.io.provenance import code_version, config_hash
from editcredit.io.volatile import read_volatile, volatile_sidecar
from editcredit.job_settings import TablesSettings
from editcredit.layout import parse_audit_json, parse_run, parse_segment_dir
from editcredit.report import context as ctx
from editcredit.report.costs import cost_rows
from editcredit.report.latex import make_env, render_template, write_tex
from editcredit.report.numbers import study_numbers
from editcredit.settings import TrainingSettings

#: the training phases whose seconds the cost table shows (``editcredit.rl.timing.PHASES``)
PHASES = ("seconds_rollout", "seconds_counterfactual", "seconds_update")

__all__ = ["TABLES", "TableInputs", "render_tables", "unresolved_slot_rows"]

#: Every table the paper includes (``paper/tables/{name}.tex``), in the order of the paper.
TABLES = (
    "suite",
    "training_health",
    "training_failures",
    "encounter",
    "credit",
    "scores",
    "comparisons",
    "trained",
    "findings",
    "audits",
    "costs",
    "replay",
    "numbers",
    "unresolved",
)

#: Columns of ``slots.parquet`` the unresolved-slots table reads (``detail`` where present).
SLOT_TABLE_COLUMNS = ("model", "evalset", "instance_id", "sample", "verdict", "reason", "attempts")


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
        slots: ``results/eval/{model}/{evalset}/slots.parquet`` of every evaluated model and
            eval set (the appendix table of unresolved slots).
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
    slots: Sequence[str | Path] = ()
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


def _timings(segments: Sequence[str | Path]) -> list[Path]:
    """The volatile sidecars of the endpoint segments' receipts: the cost table's timings."""
    return [Path(volatile_sidecar(p)) for p in _ledgers(segments)]


def arm_seconds(segments: Sequence[str | Path]) -> dict[str, dict[str, float]]:
    """Per arm: the phase seconds of its runs, all their segments (each endpoint sidecar's
    ``run_seconds``), summed over the runs."""
    out: dict[str, dict[str, float]] = {}
    for path in _ledgers(segments):
        seconds = read_volatile(path).get("run_seconds")
        if not isinstance(seconds, dict):
            raise ValueError(f"{volatile_sidecar(path)}: no run_seconds")
        arm = parse_run(parse_segment_dir(path.parent)[0]).arm
        into = out.setdefault(arm, {})
        for k, v in seconds.items():
            into[k] = into.get(k, 0.0) + float(v)
    return out


def cost_arms(training: Sequence[Any], segments: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The cost table's arm rows: runs and generated tokens (the training analysis) beside the
    phase seconds (the segments' sidecars; a dash where none was measured)."""
    seconds = arm_seconds(segments)
    return [
        {"arm": a["arm"], "runs": a["runs"], "generated_tokens": a["generated_tokens"]}
        | {k: seconds.get(a["arm"], {}).get(k) for k in PHASES}
        for a in ctx.health_context(training)
    ]


def budget_rows(segments: Sequence[str | Path], budget: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per run: the declared budget (config budgets.run) beside the spend its endpoint segment
    records (all its segments; the time spent from the receipt's volatile sidecar), and the
    attempts that failed on infrastructure, apart."""
    rows = []
    for path in _ledgers(segments):
        ledger = json.loads(path.read_text(encoding="utf-8")).get("budget")
        if not ledger:
            continue
        timed = read_volatile(path).get("budget_spent", {})
        rows.append(
            {
                "run": ledger["scope"],
                "spent": {**ledger["spent"], **timed},
                "cap": {k: float(budget.get(k) or 0) for k in (*ledger["spent"], *timed)},
                "infra_failures": ledger["infra_failures"],
            }
        )
    return rows


def unresolved_slot_rows(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The rows of the slots files whose verdict is null (the unresolved slots).

    Raises:
        ValueError: naming the file, when it cannot be read or lacks a column.
    """
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            names = pq.read_schema(path).names
        except (OSError, pa.ArrowException) as exc:
            raise ValueError(f"{path}: cannot read the slots table: {exc}") from exc
        missing = [c for c in SLOT_TABLE_COLUMNS if c not in names]
        if missing:
            raise ValueError(f"{path}: slots table lacks column(s) {missing} (docs/outputs.md)")
        columns = [*SLOT_TABLE_COLUMNS, *(["detail"] if "detail" in names else [])]
        table = pq.read_table(path, columns=columns)
        rows += table.filter(pc.is_null(table["verdict"])).to_pylist()
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
    design: TrainingSettings,
    level: float,
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
        config: the workflow config (its hash goes into every provenance line; never read).
        design: the typed ``training`` section (the GRPO settings and the pool the paper's
            numbers state).
        level: config ``stats.bootstrap.level``, the level the trained table states when no
            comparison (whose record names the level of its intervals) was computed.
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
        design=design,
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
        "trained": (
            {
                "groups": ctx.trained_context(comparisons),
                "level": comparisons[0]["bootstrap"]["level"] if comparisons else level,
            },
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
                "arms": cost_arms(training, inputs.segments),
                "budgets": budget_rows(inputs.segments, settings.budget.to_dict()),
            },
            [
                *inputs.benchmarks,
                *inputs.training,
                *_ledgers(inputs.segments),
                *_timings(inputs.segments),
            ],
        ),
        "replay": (
            {"replays": [ctx.replay_context(r) for r in inputs.records(inputs.replay)]},
            list(inputs.replay),
        ),
        "numbers": ({"numbers": numbers}, every),
        "unresolved": (
            {
                "rows": ctx.unresolved_context(
                    unresolved_slot_rows(inputs.slots), ["base", *run_order]
                ),
                "n_files": len(inputs.slots),
            },
            list(inputs.slots),
        ),
    }
    written = {}
    for name in TABLES:
        context, read = plan[name]
        body = render_template(env, f"{name}.tex.j2", **context)
        path = out_dir / f"{name}.tex"
        write_tex(path, body, read, config)
        written[name] = path
    return written
