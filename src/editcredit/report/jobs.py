"""The report jobs of the workflow (rules render_tables, figures, paper); Snakemake-free."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from editcredit.job_settings import TablesSettings
from editcredit.report.paper import build_pdf
from editcredit.report.tables import TableInputs, render_tables
from editcredit.settings import TrainingSettings

__all__ = ["figures_job", "paper_job", "tables_job"]

log = logging.getLogger(__name__)


def tables_job(
    inputs: TableInputs,
    settings: TablesSettings,
    *,
    template_dir: str,
    out_dir: str,
    config: Any,
    design: TrainingSettings,
    level: float,
) -> dict[str, Path]:
    """Rule render_tables: every ``paper/tables/*.tex``; ``settings`` is the rule's params,
    ``design`` the typed ``training`` section (the GRPO settings and pool the paper states),
    ``level`` the typed ``stats.bootstrap.level``.

    ``inputs.slots`` are the slots files of every evaluated model and eval set (the appendix
    table of unresolved slots), as the rule declares them. ``inputs.benchmarks`` are the
    Snakemake benchmark files of the jobs before the tables (the
    cost table's rows), as the rule declares them (``cost_benchmarks`` in rules/common.smk):
    nothing under ``inputs.benchmark_root`` that the DAG does not name is read.
    """
    written = render_tables(
        inputs,
        settings,
        template_dir=template_dir,
        out_dir=out_dir,
        config=config,
        design=design,
        level=level,
    )
    for rec in inputs.records(inputs.comparisons):
        log.info("%s", rec["gate"]["line"])
    return written


def _load(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def figures_job(
    *,
    training: Sequence[str],
    paired: Sequence[str],
    main: str,
    out: Mapping[str, str],
    curve: Sequence[str] = (),
) -> None:
    """Rule figures: ``out`` maps figure name to its base path (``.pdf`` and ``.png`` written).

    Names: ``training_curves``, ``holdout_curve`` (from ``curve``: the scores.json of the base,
    the evaluated intermediate checkpoints and the endpoints on the first eval set),
    ``task_differences``, ``bootstrap``.
    """
    # imported here: matplotlib (pyplot) takes about half a second to import, and the tables
    # and paper jobs, which import this module too, draw nothing
    from editcredit.report import figures

    train = [_load(p) for p in training]
    pairs = [_load(p) for p in paired]
    by_name = {rec["comparison"]: rec for rec in pairs}
    if main not in by_name:
        raise ValueError(f"stats.main {main!r} is not among the comparisons {sorted(by_name)}")
    figures.training_curves(train, out["training_curves"])
    figures.holdout_curve([_load(p) for p in curve], out["holdout_curve"])
    figures.task_differences(pairs, out["task_differences"])
    figures.bootstrap_figure(by_name[main], out["bootstrap"])


def paper_job(*, tex: str, pdf: str, build_dir: str, latexmk: str) -> None:
    """Rule paper: latexmk; warnings of the LaTeX log go to the job log."""
    warnings = build_pdf(tex, pdf, build_dir, latexmk=latexmk)
    for line in warnings:
        log.warning("LaTeX: %s", line)
    log.info("wrote %s (%d LaTeX warnings)", pdf, len(warnings))
