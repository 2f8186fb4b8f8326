# Input functions and config lookups shared by every rule file, and the wildcard constraints.
# Paths and names come from editcredit.layout (shared with the library); values from SETTINGS.
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

# The typed configuration tree, built once from the validated config (the Snakefile filled the
# schema's defaults); an unknown, missing or mistyped key stops the DAG here, naming its path.
SETTINGS = Settings.from_config(config)


def job_settings(record):
    """A job's settings (editcredit.job_settings) as its rule's one param: only the keys the
    job reads, so a change to an unrelated key of the same section never reruns it."""
    return record.from_settings(SETTINGS).to_dict()


def played_suites():
    """Suites whose tasks episodes are played on: training, evaluation, the models' probes."""
    suites = {SETTINGS.training.suite}
    suites |= {e.suite for e in SETTINGS.evaluation.evalsets.values()}
    return suites | {m.suite for m in SETTINGS.models.values() if m.suite}


# A task the configured environment cannot play stops the DAG here, naming it and the setting.
check_played_suites(
    SETTINGS.agent.environment, config["suites"], played_suites(), layout.frozen_tasks
)


wildcard_constraints:
    suite="[a-z0-9_]+",
    model="[A-Za-z0-9_.-]+",
    run=layout.RUN_REGEX,
    step="[0-9]+",
    evalset="[A-Za-z0-9_]+",


POOL_FILES = sorted(
    str(p) for p in Path("src/editcredit/data/minibugs/pool").glob("*.py")
)
PAPER_FIGURES = ("training_curves", "holdout_curve", "task_differences", "bootstrap")


def mem_mb(rule_name, fallback=2000):
    resources = SETTINGS.resources.get(rule_name)
    return resources.mem_mb if resources and resources.mem_mb is not None else fallback


def gpu_mem_mb(rule_name):
    """The GPU memory (MiB) a job of ``rule_name`` declares: 0 without a GPU, else the estimate
    of editcredit.policy.gpu_memory (the model's size, the batch, the context, the KV cache,
    the update) or resources.<rule>.gpu_mem_mb; a function of the job's wildcards."""

    def declared(wildcards):
        model = wildcards.get("model")
        if rule_name in ("base_model", "probe"):
            gpus = SETTINGS.models[model].gpu
        elif rule_name == "eval_model":
            gpus, model = SETTINGS.evaluation.gpu, None
        else:
            gpus, model = SETTINGS.training.gpu, None
        return rule_gpu_mem_mb(SETTINGS, rule_name, model, gpus)

    return declared


# --- suites and base models ---------------------------------------------------------------


def suite_cfg(wildcards):
    """The suite's generator settings (the pinned hash is read by the script, untracked)."""
    cfg = dict(config["suites"][wildcards.suite])
    cfg.pop("manifest_sha256", None)
    return cfg


def suite_sources(wildcards):
    """The files a suite is generated or imported from (their change re-freezes it)."""
    suite = SETTINGS.suites[wildcards.suite]
    if suite.generator == "minibugs":
        return POOL_FILES
    if suite.generator == "procedural":
        return ["src/editcredit/data/procedural.py"]
    return [suite.source]


def suite_summaries():
    return [layout.controls_summary(suite) for suite in SETTINGS.suites]


def model_cfg(wildcards):
    return config["models"][wildcards.model]


def model_gpus(wildcards):
    return SETTINGS.models[wildcards.model].gpu


def base_model_tasks(wildcards):
    model = SETTINGS.models[wildcards.model]
    if model.source == "train" and SETTINGS.agent.environment != "minibugs":
        raise ValueError(
            f"config: models.{wildcards.model} is trained here by scripted experts, which write "
            f"the minibugs action language; agent.environment is "
            f"{SETTINGS.agent.environment!r}"
        )
    return layout.frozen_tasks(model.suite) if model.source == "train" else []


def base_model_corpus(wildcards):
    """The frozen suites whose train tasks the experts also play (models.<name>.corpus_suites)."""
    model = SETTINGS.models[wildcards.model]
    for suite in model.corpus_suites or []:
        if suite not in SETTINGS.suites or suite == model.suite:
            raise ValueError(
                f"config: models.{wildcards.model}.corpus_suites names {suite!r}, which is "
                "not a further suite of suites.<name>"
            )
    return [layout.frozen_tasks(s) for s in model.corpus_suites or []]


def base_model_controls(wildcards):
    model = SETTINGS.models[wildcards.model]
    return layout.controls_summary(model.suite) if model.source == "train" else []


def base_model_gold_times(wildcards):
    """The control rule's per-task records of the model's suite: the gold times its experts'
    gradings are limited by (tasks of its corpus suites are measured by the job)."""
    model = SETTINGS.models[wildcards.model]
    return layout.controls_tasks(model.suite) if model.source == "train" else []


def probe_suite(wildcards):
    return SETTINGS.models[wildcards.model].suite or "minibugs"


def probe_tasks(wildcards):
    return layout.frozen_tasks(probe_suite(wildcards))


def probe_gold_times(wildcards):
    return layout.controls_tasks(probe_suite(wildcards))


def models_from(source):
    """A wildcard constraint matching the configured models of one source (train or import)."""
    return names_regex(n for n, m in SETTINGS.models.items() if m.source == source)


# --- training runs {arm}-s{seed}; step_0 is the base model ----------------------------------


def run_names():
    """Every configured run, in plan order."""
    return layout.plan_runs(SETTINGS.training.plan)


def arm_runs(arm):
    return [layout.run_name(arm, seed) for seed in SETTINGS.training.plan[arm]]


def base_model_dir():
    return layout.base_model_dir(SETTINGS.training.model)


def segment_ends():
    """The step numbers that end a segment: k, 2k, ..., endpoint."""
    k = SETTINGS.training.segment_steps
    end = SETTINGS.training.endpoint_step
    if end % k:
        raise ValueError(
            f"config training: endpoint_step {end} is not a multiple of segment_steps {k}"
        )
    return list(range(k, end + 1, k))


def checkpoint_dir(run, step):
    """The HF model directory of a run at a step (the base model at step 0)."""
    step = int(step)
    return base_model_dir() if step == 0 else layout.segment_model_dir(run, step)


def previous_step(step):
    return int(step) - SETTINGS.training.segment_steps


def previous_segment(wildcards):
    """The directory a segment starts from: the previous segment's, or the base model's."""
    prev = previous_step(wildcards.step)
    if prev < 0:
        raise ValueError(f"step {wildcards.step} is not a segment end")
    return base_model_dir() if prev == 0 else layout.segment_dir(wildcards.run, prev)


def training_tasks_file(wildcards):
    return layout.frozen_tasks(SETTINGS.training.suite)


def training_controls_file(wildcards):
    return layout.controls_summary(SETTINGS.training.suite)


def training_gold_times(wildcards):
    """The control rule's per-task records of the training suite (the gold runs' times)."""
    return layout.controls_tasks(SETTINGS.training.suite)


def arm_control_replays(wildcards):
    """Run name -> its seed's control replay, for every run of an arm."""
    seeds = SETTINGS.training.plan[wildcards.arm]
    return {layout.run_name(wildcards.arm, s): layout.control_replay(s) for s in seeds}


def run_segments(runs):
    """Every segment directory of the given runs (the training outputs)."""
    return [layout.segment_dir(run, n) for run in runs for n in segment_ends()]


def arm_segments(wildcards):
    return run_segments(arm_runs(wildcards.arm))


def endpoint_segments():
    end = SETTINGS.training.endpoint_step
    return [layout.segment_dir(run, end) for run in run_names()]


def replay_segments():
    """Every segment of every run: their stored gradings are the replay check's population."""
    return run_segments(run_names())


def audit_results():
    return [layout.audit_json(r, n) for r in run_names() for n in segment_ends()]


# --- storage: retention of intermediate checkpoints and the plan's forecast -------------------


def pruned_steps():
    """Segment ends whose model and optimiser files retention removes (training.keep_checkpoints;
    the endpoint, every k-th segment and the diagnostic steps stay)."""
    from editcredit.storage.retention import pruned_steps as pruned

    keep = SETTINGS.training.keep_checkpoints
    return pruned(segment_ends(), keep, diagnostic_steps())


def pruned_records():
    """The retention records the default target asks for: one per pruned segment of each run."""
    return [layout.pruned_record(r, n) for r in run_names() for n in pruned_steps()]


def prune_inputs(wildcards):
    """What must exist before a segment's files go: the segment, the next one (no resume needs
    it then) and the audits that read its model (its own and the next segment's)."""
    step = int(wildcards.step)
    if step not in pruned_steps():
        raise ValueError(
            f"step {step} of {wildcards.run} is kept (training.keep_checkpoints)"
        )
    after = step + SETTINGS.training.segment_steps
    return {
        "segment": layout.segment_dir(wildcards.run, step),
        "next": layout.segment_dir(wildcards.run, after),
        "audits": [layout.audit_json(wildcards.run, n) for n in (step, after)],
    }


def storage_forecast():
    """The plan's bytes still to write against the free space (editcredit.storage.plan)."""
    from editcredit.storage.plan import PlanFacts, study_forecast

    facts = PlanFacts(
        runs=run_names(),
        segment_ends=segment_ends(),
        pruned=pruned_steps(),
        eval_jobs=eval_jobs(),
    )
    return study_forecast(SETTINGS, facts, Path("."))


# --- evaluation: eval models are 'base' and each run at the endpoint (docs/outputs.md) ------


def diagnostic_steps():
    """Intermediate checkpoints evaluated for the holdout curve (evaluation.diagnostic_every
    and diagnostic_steps)."""
    from editcredit.evaluation.plan import diagnostic_steps as chosen

    ev = SETTINGS.evaluation
    return chosen(
        segment_ends(),
        SETTINGS.training.endpoint_step,
        ev.diagnostic_every,
        ev.diagnostic_steps,
    )


def eval_model_specs():
    """Eval model name -> HF dir, rule input, run, step, diagnostic, eval sets, samples per
    task (0: the eval set's); in plan order."""
    ev = SETTINGS.evaluation
    end = SETTINGS.training.endpoint_step
    base = base_model_dir()
    models = {
        "base": dict(
            dir=base,
            input=base,
            run="",
            step=0,
            diagnostic=False,
            evalsets=[],
            samples=0,
        ),
    }
    steps = [(end, False)] + [(step, True) for step in diagnostic_steps()]
    curve = [SETTINGS.stats.evalsets[0]]  # a diagnostic checkpoint's one use: the curve
    for run in run_names():
        for step, diagnostic in steps:
            name = layout.diagnostic_model(run, step) if diagnostic else run
            models[name] = dict(
                dir=checkpoint_dir(run, step),
                input=layout.segment_dir(run, step),
                run=run,
                step=step,
                diagnostic=diagnostic,
                evalsets=curve if diagnostic else [],
                samples=ev.diagnostic_samples if diagnostic else 0,
            )
    if ev.models:
        unknown = [m for m in ev.models if m not in models]
        if unknown:
            raise ValueError(
                f"config evaluation.models: unknown {unknown}; known: {sorted(models)}"
            )
        models = {m: models[m] for m in ev.models}
    return models


def eval_jobs():
    """(eval model, eval set) of every planned evaluation: the base and the endpoints on every
    eval set, an intermediate checkpoint on the curve's eval set alone."""
    from editcredit.evaluation.plan import ModelSpec

    return [
        (m, e)
        for m, spec in eval_model_specs().items()
        for e in SETTINGS.evaluation.evalsets
        if ModelSpec.from_mapping(m, spec).evaluated_on(e)
    ]


def curve_scores():
    """The scores of every planned eval model (the base, each run's evaluated intermediate
    checkpoints and its endpoint) on the first of stats.evalsets: the holdout curve."""
    evalset = SETTINGS.stats.evalsets[0]
    return [
        layout.EVAL_SCORES.format(model=m, evalset=evalset) for m in eval_model_specs()
    ]


def eval_models():
    """The compared eval models: every planned one except the diagnostic checkpoints."""
    return [name for name, m in eval_model_specs().items() if not m["diagnostic"]]


def eval_model_regex():
    return names_regex(eval_model_specs())


def eval_plan_models():
    """What the plan records of each model (not the rule input)."""
    return {
        n: {k: v for k, v in m.items() if k != "input"}
        for n, m in eval_model_specs().items()
    }


def eval_plan_pool(wildcards):
    """The training pool file, when an eval set takes the pool's tasks (with_training_pool)."""
    sets = SETTINGS.evaluation.evalsets.values()
    return (
        {"pool": layout.TRAINING_POOL}
        if any(s.with_training_pool for s in sets)
        else {}
    )


def eval_plan_tasks():
    suites = sorted({s.suite for s in SETTINGS.evaluation.evalsets.values()})
    return [layout.frozen_tasks(s) for s in suites]


def eval_model_input(wildcards):
    return eval_model_specs()[wildcards.model]["input"]


def eval_model_dir(wildcards):
    return eval_model_specs()[wildcards.model]["dir"]


def eval_set_tasks(wildcards):
    return layout.frozen_tasks(SETTINGS.evaluation.evalsets[wildcards.evalset].suite)


def eval_set_gold_times(wildcards):
    """The control rule's per-task records of the eval set's suite (the gold runs' times)."""
    return layout.controls_tasks(SETTINGS.evaluation.evalsets[wildcards.evalset].suite)


def eval_targets():
    return [layout.EVAL_PLAN_SUMMARY] + [
        layout.EVAL_SCORES.format(model=m, evalset=e) for m, e in eval_jobs()
    ]


def all_eval_slots():
    """Slots files of every planned evaluation (diagnostic checkpoints included): the
    appendix table of unresolved slots reads them all."""
    return [layout.eval_slots(m, e) for m, e in eval_jobs()]


def evalset_slots(wildcards):
    return [layout.eval_slots(m, wildcards.evalset) for m in eval_models()]


def evalset_samples(evalset):
    """Planned samples per task of an eval set (config evaluation.evalsets); 0 = from the rows."""
    evalset = SETTINGS.evaluation.evalsets.get(evalset)
    return evalset.samples if evalset else 0


# --- statistics and the paper ---------------------------------------------------------------


def stats_comparisons():
    """The configured comparisons (config stats.comparisons), resolved against the plan."""
    from editcredit.stats.comparisons import comparison_specs

    return comparison_specs(config["stats"], config["training"]["plan"])


def comparison_params(wildcards):
    spec = stats_comparisons()[wildcards.comparison]
    return {
        "name": spec.name,
        "arm_a": spec.arm_a,
        "arm_b": spec.arm_b,
        "seeds": list(spec.seeds),
        "evalset": spec.evalset,
    }


def comparison_slots(wildcards):
    spec = stats_comparisons()[wildcards.comparison]
    return [layout.eval_slots(m, spec.evalset) for m in spec.all_models]


def comparison_segments(wildcards):
    """Training segments of the compared runs (their rollouts give the in-pool tasks)."""
    return run_segments(stats_comparisons()[wildcards.comparison].runs)


def stats_results(kind):
    """Result files of the statistics rules, by kind."""
    comparisons = list(SETTINGS.stats.comparisons)
    if kind == "compare":
        return [layout.stats_compare(c) for c in comparisons]
    if kind == "paired":
        return [layout.stats_paired(c) for c in comparisons]
    if kind == "scores":
        return [layout.stats_scores(e) for e in SETTINGS.stats.evalsets]
    if kind == "training":
        return [layout.stats_training(arm) for arm in SETTINGS.training.plan]
    raise ValueError(f"unknown kind of statistics result {kind!r}")


def rule_gpus():
    """GPUs each rule requests (the GPU seconds of the cost table)."""
    gpus = {name: int(r.gpu or 0) for name, r in SETTINGS.resources.items()}
    gpus["train_segment"] = SETTINGS.training.gpu
    gpus["control_replay"] = SETTINGS.training.gpu
    model_gpus = max((m.gpu for m in SETTINGS.models.values()), default=0)
    for name in ("base_model", "probe"):
        gpus.setdefault(name, model_gpus)
    gpus.setdefault("eval_model", SETTINGS.evaluation.gpu)
    return gpus


def tables_settings():
    """Rule render_tables' settings (editcredit.job_settings.TablesSettings) as its param."""
    return TablesSettings(
        main=SETTINGS.stats.main,
        arm_order=list(SETTINGS.training.plan),
        run_order=run_names(),
        gpus_by_rule=rule_gpus(),
        budget=SETTINGS.budgets.run,
    ).to_dict()


def cost_benchmarks(wildcards):
    """The benchmark files of every job the default target runs before the tables: the cost
    table's rows, declared so that a changed one re-renders the tables and a leftover of an
    earlier plan stays out. Patterns come from the rules themselves; a rule this workflow does not include
    (a partial Snakefile) has no jobs here."""
    plan = SETTINGS.training.plan
    runs_steps = [dict(run=r, step=n) for r in run_names() for n in segment_ends()]
    suites = [dict(suite=s) for s in SETTINGS.suites]
    base = SETTINGS.models[SETTINGS.training.model]
    evals = [dict(model=m, evalset=e) for m, e in eval_jobs()]
    comparisons = [dict(comparison=c) for c in SETTINGS.stats.comparisons]
    jobs = {
        "freeze_suite": suites,
        "control": suites,
        "base_model" if base.source == "train" else "import_model": [
            dict(model=SETTINGS.training.model)
        ],
        "train_segment": runs_steps,
        "control_replay": [
            dict(seed=s) for s in sorted({s for v in plan.values() for s in v})
        ],
        "audit_params": runs_steps,
        "audit_summary": [{}],
        "eval_plan": [{}],
        "eval_model": evals,
        "eval_model_scores": evals,
        "evalset_scores": [dict(evalset=e) for e in SETTINGS.stats.evalsets],
        "paired": comparisons,
        "compare": comparisons,
        "training_analysis": [dict(arm=arm) for arm in plan],
        "replay": [{}],
    }
    if config["stop"]["enabled"]:  # render_tables waits for the study's evaluation
        jobs["freeze_protocol"] = [dict(study=stop_study())]
        jobs["stop_checkpoints"] = [dict(model=m) for m in stop_models()]
        jobs["stop_policies"] = [{}]
        jobs["stop_eval"] = [{}]
    files = []
    for name, wildcard_sets in jobs.items():
        if rules.has(name):
            pattern = str(getattr(rules, name).benchmark)
            files += [pattern.format(**w) for w in wildcard_sets]
    return sorted(files)


def paper_tables(ext="tex"):
    """The generated tables (paper/tables/*.tex), or their templates with ext="tex.j2"."""
    from editcredit.report.tables import TABLES

    pattern = layout.TABLE_TEMPLATE if ext == "tex.j2" else layout.PAPER_TABLE
    return [pattern.format(name=name) for name in TABLES]


# --- the stop-or-continue study (rules/stop.smk) --------------------------------------------


def stop_models():
    """Models whose eval trajectories are studied (config stop.models; default: eval models)."""
    return list(config["stop"]["models"]) or eval_models()


def stop_evalsets():
    return list(config["stop"]["evalsets"]) or list(config["evaluation"]["evalsets"])


def stop_study():
    return Path(config["stop"]["protocol"]).stem


def stop_receipt():
    return layout.protocol_receipt(stop_study())


def stop_slots(wildcards):
    return [layout.eval_slots(wildcards.model, e) for e in stop_evalsets()]


def stop_suites():
    ev = config["evaluation"]["evalsets"]
    return sorted({ev[e]["suite"] for e in stop_evalsets()})


def stop_tasks():
    return [layout.frozen_tasks(s) for s in stop_suites()]


def stop_gold_times():
    """The control rule's per-task records of the studied eval sets' suites: the checkpoints are
    held to the limits their evaluation was held to."""
    return [layout.controls_tasks(s) for s in stop_suites()]


def stop_checkpoints():
    return [layout.stop_checkpoints(m) for m in stop_models()]


def stop_results():
    """The study's evaluation when it runs (render_tables waits for it: its rules are costed)."""
    return [layout.STOP_EVAL] if SETTINGS.stop.enabled else []


def stop_targets():
    """What rule all asks of the study (nothing when config stop.enabled is false)."""
    if not config["stop"]["enabled"]:
        return []
    return [*stop_results(), *stop_paper_inputs()]


def stop_budget():
    return config["budgets"]["studies"].get(stop_study(), {})


def stop_paper_inputs():
    """The paper's stop-or-continue section and figure (rule stop_report), when the study runs."""
    if not config["stop"]["enabled"]:
        return []
    return [layout.STOP_SECTION, layout.STOP_FIGURE.format(ext="pdf")]
