"""A fake results tree run through the statistics and report jobs (no Snakemake)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_results import (
    FIGURES,
    REPLAY_SUMMARY,
    FakeSpec,
    control_path,
    run_names,
    write_fake_tree,
)
from taskfactory import CONFIG

from editcredit.job_settings import TablesSettings
from editcredit.jobs.credit_truth import credit_truth_files_job
from editcredit.jobs.strata import strata_job
from editcredit.report.jobs import figures_job, tables_job
from editcredit.report.tables import TableInputs
from editcredit.settings import BudgetCaps, TrainingSettings
from editcredit.stats.comparisons import comparison_specs
from editcredit.stats.credit_truth import credit_truth_runs
from editcredit.stats.jobs import evalset_scores_job, gate_job, paired_job, training_job
from editcredit.stats.strata import strata_specs

REPO = Path(__file__).resolve().parents[2]
#: ``budgets.run`` with no caps (0 = none).
STATS = {
    "evalsets": ["holdout"],
    "main": "M-B",
    "comparisons": {
        "M-B": {"a": "M", "b": "B"},
        "M-O": {"a": "M", "b": "O"},
        "M42-E42": {"a": "M", "b": "E", "seeds": [42]},
    },
    "bootstrap": {"n_resamples": 2000, "rng_seed": 20260927, "level": 0.95},
    "gate": {"min_difference": 0.04, "ci_lower_above": 0.0},
    "encounter_k": [2],
    "failure_buckets": 4,
    "histogram_bins": 40,
}
#: config ``training`` as the tables state it: the project's, with lambda 0.1 and groups of 4.
GRPO = {**CONFIG["training"]["grpo"], "credit_lambda": 0.1, "group_size": 4}
DESIGN = TrainingSettings.from_mapping({**CONFIG["training"], "grpo": GRPO})


def build_all(root: Path, spec: FakeSpec, stats: dict = STATS) -> dict:
    """Every stats and report job on the fake tree under ``root`` (paths relative to it)."""
    config = {"stats": stats, "training": {"grpo": {"credit_lambda": 0.1, "group_size": 4}}}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        runs = run_names(spec)
        steps = range(spec.segment_steps, spec.endpoint_step + 1, spec.segment_steps)
        slots = {m: f"results/eval/{m}/{spec.evalset}/slots.parquet" for m in ["base", *runs]}
        evalset_scores_job(
            list(slots.values()), "results/stats/scores/holdout.json", "holdout", config
        )
        specs = comparison_specs(stats, spec.plan)
        for name, c in specs.items():
            paired_job(
                {
                    "name": name,
                    "arm_a": c.arm_a,
                    "arm_b": c.arm_b,
                    "seeds": list(c.seeds),
                    "evalset": c.evalset,
                },
                [slots[m] for m in c.all_models],
                [f"runs/{m}/step_{n}" for m in c.all_models for n in steps],
                f"results/stats/paired/{name}.json",
                bootstrap=stats["bootstrap"],
                histogram_bins=stats["histogram_bins"],
                config=config,
            )
            gate_job(
                f"results/stats/paired/{name}.json",
                f"results/stats/{name}.json",
                min_difference=stats["gate"]["min_difference"],
                ci_lower_above=stats["gate"]["ci_lower_above"],
                config=config,
            )
        for arm, seeds in spec.plan.items():
            training_job(
                arm,
                [f"runs/{arm}-s{s}/step_{n}" for s in seeds for n in steps],
                {f"{arm}-s{s}": control_path(s) for s in seeds},
                f"results/stats/training/{arm}.json",
                endpoint_step=spec.endpoint_step,
                n_buckets=stats["failure_buckets"],
                encounter_ks=stats["encounter_k"],
                bootstrap=stats["bootstrap"],
                config=config,
            )
        inputs = TableInputs(
            controls=["results/controls/minibugs/summary.json"],
            scores=["results/stats/scores/holdout.json"],
            comparisons=[f"results/stats/{n}.json" for n in specs],
            training=[f"results/stats/training/{a}.json" for a in spec.plan],
            audits=[f"results/audits/{r}/step_{n}.json" for r in runs for n in steps],
            benchmarks=sorted(Path("results/benchmarks").rglob("*.tsv")),
            benchmark_root="results/benchmarks",
            segments=[f"runs/{r}/step_{spec.endpoint_step}" for r in runs],
            replay=[REPLAY_SUMMARY],
            slots=list(slots.values()),
        )
        settings = TablesSettings(
            main=stats["main"],
            arm_order=list(spec.plan),
            run_order=runs,
            gpus_by_rule={"train_segment": 1},
            budget=BudgetCaps(steps=0, tokens=1_000_000, gradings=0, gpu_hours=0, wall_seconds=0),
        )
        tables = tables_job(
            inputs,
            settings,
            template_dir=str(REPO / "paper" / "templates"),
            out_dir="paper/tables",
            config=config,
            design=DESIGN,
            level=stats["bootstrap"]["level"],
        )
        strata = strata_specs(spec.plan, None)
        strata_job(
            [s.to_dict() for s in strata],
            list(dict.fromkeys(slots[m] for s in strata for m in s.all_models)),
            "data/frozen/minibugs/tasks.parquet",
            "results/stats/strata.json",
            "paper/tables/strata.tex",
            evalset="holdout",
            bootstrap=stats["bootstrap"],
            config=config,
        )
        queried = credit_truth_runs(lambda arm: [f"{arm}-s{s}" for s in spec.plan.get(arm, [])])
        credit_truth_files_job(
            [f"runs/{run}/step_{n}" for run in queried for n in steps],
            "results/stats/credit_truth.json",
            "paper/tables/credit_truth.tex",
            template=str(REPO / "paper" / "templates" / "credit_truth.tex.j2"),
            config=config,
        )
        figures_job(
            training=[f"results/stats/training/{a}.json" for a in spec.plan],
            paired=[f"results/stats/paired/{n}.json" for n in specs],
            main=stats["main"],
            out={k: f"paper/figures/{k}" for k in FIGURES},
            curve=sorted(str(p) for p in Path("results/eval").glob("*/holdout/scores.json")),
        )
    finally:
        os.chdir(cwd)
    return {"root": root, "spec": spec, "tables": tables, "comparisons": list(specs)}


@pytest.fixture(scope="module")
def resolved_tree(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("resolved")
    return build_all(root, write_fake_tree(root, FakeSpec()))


@pytest.fixture(scope="module")
def unresolved_tree(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("unresolved")
    return build_all(root, write_fake_tree(root, FakeSpec(unresolved=5)))
