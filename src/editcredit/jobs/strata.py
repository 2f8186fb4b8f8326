"""Rule strata: M - B, M - O and the truth control T - O by the number of bugs of the eval
set's tasks, with both CIs and the minimum detectable difference (JSON result and the paper's
table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from editcredit.io.provenance import write_result_json, write_result_tex
from editcredit.jobs.harness import Job, JobContext, rule_files
from editcredit.layout import parse_eval_slots, run_name
from editcredit.report.strata import strata_tex
from editcredit.stats._records import to_plain
from editcredit.stats.loaders import arm_scores, evalset_plan, read_bug_counts, read_slots
from editcredit.stats.strata import StrataSpec, strata_record

__all__ = ["JOB", "strata_job"]


def strata_job(
    specs: Sequence[Mapping[str, Any]],
    slots: Sequence[str | Path],
    tasks: str | Path,
    out_json: str | Path,
    out_tex: str | Path,
    *,
    evalset: str,
    bootstrap: Mapping[str, Any],
    config: Any,
    n_samples: int | None = None,
) -> dict[str, Any]:
    """Read the slots of every compared model and the task records, write the record and table.

    ``specs``: :meth:`StrataSpec.to_dict` of each comparison (rule strata's param).
    """
    comparisons = [StrataSpec.from_dict(s) for s in specs]
    tables = {parse_eval_slots(p)[0]: read_slots(p) for p in slots}
    scores = {}
    planned: tuple[str, ...] = ()
    if tables:
        planned, n = evalset_plan(tables.values(), n_samples)
        seeds: dict[str, list[int]] = {}
        for spec in comparisons:
            for arm in (spec.arm_a, spec.arm_b):
                seeds.setdefault(arm, [])
                seeds[arm] += [s for s in spec.seeds if s not in seeds[arm]]
        for arm, arm_seeds in seeds.items():
            if arm_seeds:
                frames = {s: tables[run_name(arm, s)] for s in arm_seeds}
                scores[arm] = arm_scores(arm, frames, planned, n)
    record = strata_record(
        comparisons,
        scores,
        planned,
        read_bug_counts(tasks),
        evalset=evalset,
        n_resamples=int(bootstrap["n_resamples"]),
        rng_seed=int(bootstrap["rng_seed"]),
        level=float(bootstrap["level"]),
    )
    inputs = [*slots, tasks]
    write_result_json(out_json, to_plain(record), inputs, config)
    write_result_tex(out_tex, strata_tex(record), [out_json], config)
    return record


def _call(sm: Any, _settings: None, ctx: JobContext) -> dict[str, Any]:
    return strata_job(
        sm.params.specs,
        list(sm.input.slots),
        sm.input.tasks,
        sm.output.json,
        sm.output.tex,
        evalset=sm.params.evalset,
        bootstrap=sm.params.bootstrap,
        config=ctx.provenance_config,
        n_samples=sm.params.n_samples or None,
    )


def _console(record: dict[str, Any]) -> str:
    counts = ", ".join(f"{s['label']}: {s['n_tasks']}" for s in record["strata"])
    return f"strata on {record['evalset']} ({counts})"


JOB = Job("strata", inputs=rule_files, call=_call, console=_console)
