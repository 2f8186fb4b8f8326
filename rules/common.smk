# Lookups shared by every rule file, and the wildcard constraints. Paths and names come from
# editcredit.layout; values from SETTINGS; what the study builds from PLAN
# (editcredit.study_plan: runs, segments, eval models, comparisons, the stop study, every job).
from pathlib import Path

from editcredit import layout
from editcredit.agent.environments import check_played_suites
from editcredit.job_settings import (
    ControlReplaySettings,
    EvalModelSettings,
    PoolJobSettings,
    ProbeJobSettings,
    SegmentSettings,
    TablesSettings,
)
from editcredit.layout import names_regex
from editcredit.policy.gpu_memory import rule_gpu_mem_mb
from editcredit.settings import Settings
from editcredit.study_plan import StudyPlan

# The typed configuration tree, built once from the validated config (the Snakefile filled the
# schema's defaults), and the study plan built from it: each of its pieces is worked out on first
# use, which rule all and the storage forecast make at DAG construction. A key that is unknown,
# missing, mistyped or describes no buildable study stops the DAG there, naming its path.
SETTINGS = Settings.from_config(config)
PLAN = StudyPlan(SETTINGS)
SUITES = {name: suite.to_dict() for name, suite in SETTINGS.suites.items()}

# A task the configured environment cannot play stops the DAG here, naming it and the setting.
check_played_suites(
    SETTINGS.agent.environment, SUITES, PLAN.played_suites, layout.frozen_tasks
)


wildcard_constraints:
    suite="[a-z0-9_]+",
    model="[A-Za-z0-9_.-]+",
    run=layout.TRAINED_RUN_REGEX,
    step="[0-9]+",
    evalset="[A-Za-z0-9_]+",


POOL_FILES = sorted(
    str(p) for p in Path("src/editcredit/data/minibugs/pool").glob("*.py")
)
PAPER_FIGURES = ("training_curves", "holdout_curve", "task_differences", "bootstrap")


def job_settings(record):
    """A job's settings (editcredit.job_settings) as its rule's one param: only the keys the
    job reads, so a change to an unrelated key of the same section never reruns it."""
    return record.from_settings(SETTINGS).to_dict()


def mem_mb(rule_name, fallback=2000):
    resources = SETTINGS.resources.get(rule_name)
    return resources.mem_mb if resources and resources.mem_mb is not None else fallback


def gpu_mem_mb(rule_name):
    """The GPU memory (MiB) a job of ``rule_name`` declares (editcredit.policy.gpu_memory, or
    resources.<rule>.gpu_mem_mb), from its wildcards: 0 without a GPU."""

    def declared(wildcards):
        model = wildcards.get("model") if rule_name in ("base_model", "probe") else None
        gpus = PLAN.gpus(rule_name, model)
        return rule_gpu_mem_mb(SETTINGS, rule_name, model, gpus)

    return declared


# --- suites and base models -----------------------------------------------------------------


def suite_cfg(wildcards):
    """The suite's generator settings (the pinned hash is read by the script, untracked)."""
    cfg = dict(SUITES[wildcards.suite])
    cfg.pop("manifest_sha256", None)
    return cfg


def suite_sources(wildcards):
    """The files a suite is generated or imported from (their change re-freezes it)."""
    suite = SETTINGS.suites[wildcards.suite]
    if suite.generator == "minibugs":
        return POOL_FILES
    if suite.generator == "multibugs":
        return POOL_FILES + ["src/editcredit/suites/multibugs.py"]
    if suite.generator == "procedural":
        return ["src/editcredit/data/procedural.py"]
    return [suite.source]


def trained_suite(wildcards, path):
    """``path`` of the suite a base model is trained on by experts; none for an import."""
    PLAN.check_base_model(wildcards.model)
    model = SETTINGS.models[wildcards.model]
    return path(model.suite) if model.source == "train" else []


def probe_suite(wildcards):
    return SETTINGS.models[wildcards.model].suite or "minibugs"


def storage_forecast():
    """The plan's bytes still to write against the free space (editcredit.storage.plan)."""
    from editcredit.storage.plan import study_forecast

    return study_forecast(SETTINGS, PLAN.storage_facts(), Path("."))


# --- evaluation, statistics and the paper ---------------------------------------------------


def eval_plan_pool(wildcards):
    """The training pool file, when an eval set takes the pool's tasks (with_training_pool)."""
    return {"pool": layout.TRAINING_POOL} if PLAN.evaluates_pool else {}


def comparison_params(wildcards):
    return PLAN.comparison_record(wildcards.comparison)


def tables_settings():
    """Rule render_tables' settings (editcredit.job_settings.TablesSettings) as its param."""
    return TablesSettings(
        main=SETTINGS.stats.main,
        arm_order=list(SETTINGS.training.plan),
        run_order=PLAN.run_names,
        gpus_by_rule=PLAN.gpus_by_rule(),
        budget=SETTINGS.budgets.run,
    ).to_dict()


def cost_benchmarks(wildcards):
    """The benchmark files of the plan's costed jobs (the cost table's rows), declared so that
    a changed one re-renders the tables and a leftover of an earlier plan stays out; a rule
    this workflow does not include (a partial Snakefile) has no jobs here."""
    jobs = [j for j in PLAN.costed_jobs if rules.has(j.rule)]
    return sorted(
        str(getattr(rules, j.rule).benchmark).format(**j.values) for j in jobs
    )


def paper_tables(ext="tex"):
    """The generated tables (paper/tables/*.tex), or their templates with ext="tex.j2"."""
    from editcredit.report.tables import TABLES

    pattern = layout.TABLE_TEMPLATE if ext == "tex.j2" else layout.PAPER_TABLE
    return [pattern.format(name=name) for name in TABLES]
