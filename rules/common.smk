# Wildcard constraints, input functions and config lookups shared by every rule file.
import re
from pathlib import Path


wildcard_constraints:
    suite="[a-z0-9_]+",


POOL_FILES = sorted(
    str(p) for p in Path("src/editcredit/data/minibugs/pool").glob("*.py")
)


def suite_cfg(wildcards):
    """The suite's generator settings (the pinned hash is read by the script, untracked)."""
    cfg = dict(config["suites"][wildcards.suite])
    cfg.pop("manifest_sha256", None)
    return cfg


def suite_sources(wildcards):
    """The files a suite is generated or imported from (their change re-freezes it)."""
    cfg = config["suites"][wildcards.suite]
    if cfg["generator"] == "minibugs":
        return POOL_FILES
    return [cfg["source"]]


def mem_mb(rule_name, fallback=2000):
    return config["resources"].get(rule_name, {}).get("mem_mb", fallback)


wildcard_constraints:
    model="[A-Za-z0-9_.-]+",


def model_cfg(wildcards):
    return config["models"][wildcards.model]


def model_gpus(wildcards):
    return int(config["models"][wildcards.model].get("gpu", 0))


def base_model_tasks(wildcards):
    cfg = config["models"][wildcards.model]
    if cfg["source"] != "train":
        return []
    return f"data/frozen/{cfg['suite']}/tasks.parquet"


def base_model_controls(wildcards):
    cfg = config["models"][wildcards.model]
    if cfg["source"] != "train":
        return []
    return f"results/controls/{cfg['suite']}/summary.json"


def probe_tasks(wildcards):
    suite = config["models"][wildcards.model].get("suite", "minibugs")
    return f"data/frozen/{suite}/tasks.parquet"


def models_from(source):
    """A wildcard regex matching the configured models of one source (train or import)."""
    names = [n for n, m in config["models"].items() if m["source"] == source]
    return "|".join(re.escape(n) for n in names) or "(?!x)x"


# --- training runs: names {arm}-s{seed}; step_0 is the base model ---------------------------


wildcard_constraints:
    run="[OBME]-s[0-9]+",
    step="[0-9]+",


def run_names():
    """Every configured run, in plan order."""
    plan = config["training"]["plan"]
    return [f"{arm}-s{seed}" for arm, seeds in plan.items() for seed in seeds]


def run_arm_seed(run):
    arm, seed = run.split("-s")
    return arm, int(seed)


def base_model_dir():
    return f"models/base/{config['training']['model']}"


def segment_ends():
    """The step numbers that end a segment: k, 2k, ..., endpoint."""
    k = config["training"]["segment_steps"]
    end = config["training"]["endpoint_step"]
    if end % k:
        raise ValueError(
            f"config training: endpoint_step {end} is not a multiple of segment_steps {k}"
        )
    return list(range(k, end + 1, k))


def checkpoint_dir(run, step):
    """The HF model directory of a run at a step (the base model at step 0)."""
    step = int(step)
    return base_model_dir() if step == 0 else f"runs/{run}/step_{step}/model"


def previous_step(step):
    return int(step) - config["training"]["segment_steps"]


def previous_segment(wildcards):
    """The directory a segment starts from: the previous segment's, or the base model's."""
    prev = previous_step(wildcards.step)
    if prev < 0:
        raise ValueError(f"step {wildcards.step} is not a segment end")
    return base_model_dir() if prev == 0 else f"runs/{wildcards.run}/step_{prev}"


def training_tasks_file(wildcards):
    return f"data/frozen/{config['training']['suite']}/tasks.parquet"


def training_controls_file(wildcards):
    return f"results/controls/{config['training']['suite']}/summary.json"


def control_replay_file(seed):
    """The no-learning control of a training seed (the base policy on the seed's draws)."""
    return f"results/training/control/s{seed}.parquet"


def arm_control_replays(wildcards):
    """Run name -> its seed's control replay, for every run of an arm."""
    seeds = config["training"]["plan"][wildcards.arm]
    return {f"{wildcards.arm}-s{seed}": control_replay_file(seed) for seed in seeds}


def endpoint_segments():
    end = config["training"]["endpoint_step"]
    return [f"runs/{run}/step_{end}" for run in run_names()]


# --- statistics and paper


def stats_comparisons():
    """The configured comparisons (config stats.comparisons), resolved against the plan."""
    from editcredit.stats.comparisons import comparison_specs

    return comparison_specs(config["stats"], config["training"]["plan"])


def names_regex(names):
    """A wildcard regex matching exactly the given names."""
    return "|".join(re.escape(str(n)) for n in names) or "(?!x)x"


def eval_models():
    """Eval model names: the base model and every run at the endpoint (docs/outputs.md).

    Follows config evaluation.models through eval_model_specs (rules of the evaluation) when
    those are defined; diagnostic checkpoints are never compared.
    """
    specs = globals().get("eval_model_specs")
    if specs is None:
        return ["base", *run_names()]
    return [name for name, m in specs().items() if not m["diagnostic"]]


def eval_slots(model, evalset):
    return f"results/eval/{model}/{evalset}/slots.parquet"


def evalset_slots(wildcards):
    return [eval_slots(m, wildcards.evalset) for m in eval_models()]


def evalset_samples(evalset):
    """Planned samples per task of an eval set (config evaluation.evalsets); 0 = from the rows."""
    sets = config.get("evaluation", {}).get("evalsets", {})
    return int(sets.get(evalset, {}).get("samples", 0))


def run_segments(runs):
    """Every segment directory of the given runs (the training outputs)."""
    return [f"runs/{run}/step_{n}" for run in runs for n in segment_ends()]


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
    return [eval_slots(m, spec.evalset) for m in spec.all_models]


def comparison_segments(wildcards):
    """Training segments of the compared runs (their rollouts give the in-pool tasks)."""
    return run_segments(stats_comparisons()[wildcards.comparison].all_models)


def arm_segments(wildcards):
    seeds = config["training"]["plan"][wildcards.arm]
    return run_segments([f"{wildcards.arm}-s{seed}" for seed in seeds])


def stats_results(kind):
    """Result files of the statistics rules, by kind."""
    comparisons = list(config["stats"]["comparisons"])
    if kind == "compare":
        return [f"results/stats/{c}.json" for c in comparisons]
    if kind == "paired":
        return [f"results/stats/paired/{c}.json" for c in comparisons]
    if kind == "scores":
        return [f"results/stats/scores/{e}.json" for e in config["stats"]["evalsets"]]
    if kind == "training":
        arms = config["training"]["plan"]
        return [f"results/stats/training/{arm}.json" for arm in arms]
    raise ValueError(f"unknown kind of statistics result {kind!r}")


def audit_results():
    steps = segment_ends()
    return [f"results/audits/{r}/step_{n}.json" for r in run_names() for n in steps]


def suite_summaries():
    return [f"results/controls/{suite}/summary.json" for suite in config["suites"]]


def rule_gpus():
    """GPUs each rule requests (the GPU seconds of the cost table)."""
    gpus = {name: int(r.get("gpu", 0)) for name, r in config["resources"].items()}
    gpus["train_segment"] = int(config["training"]["gpu"])
    gpus["control_replay"] = int(config["training"]["gpu"])
    model_gpus = max(
        (int(m.get("gpu", 0)) for m in config["models"].values()), default=0
    )
    for name in ("base_model", "probe"):
        gpus.setdefault(name, model_gpus)
    gpus.setdefault("eval_model", int(config.get("evaluation", {}).get("gpu", 0)))
    return gpus


def paper_tables(ext="tex"):
    """The generated tables (paper/tables/*.tex), or their templates with ext="tex.j2"."""
    from editcredit.report.tables import TABLES

    folder = "paper/templates" if ext == "tex.j2" else "paper/tables"
    return [f"{folder}/{name}.{ext}" for name in TABLES]


PAPER_FIGURES = ("training_curves", "task_differences", "bootstrap")


# --- evaluation: eval models are 'base' and each run at the endpoint (docs/outputs.md) ------


wildcard_constraints:
    evalset="[A-Za-z0-9_]+",


def eval_model_specs():
    """Eval model name -> HF dir, rule input, run, step, diagnostic; in plan order."""
    ev = config["evaluation"]
    end = config["training"]["endpoint_step"]
    base = base_model_dir()
    models = {
        "base": dict(dir=base, input=base, run="", step=0, diagnostic=False),
    }
    steps = [(end, False)]
    for step in ev["diagnostic_steps"]:
        if step not in segment_ends() or step == end:
            raise ValueError(
                f"config evaluation.diagnostic_steps: {step} is not a segment end before "
                f"the endpoint {end}"
            )
        steps.append((step, True))
    for run in run_names():
        for step, diagnostic in steps:
            name = f"{run}-step{step}" if diagnostic else run
            models[name] = dict(
                dir=checkpoint_dir(run, step),
                input=f"runs/{run}/step_{step}",
                run=run,
                step=step,
                diagnostic=diagnostic,
            )
    if ev["models"]:
        unknown = [m for m in ev["models"] if m not in models]
        if unknown:
            raise ValueError(
                f"config evaluation.models: unknown {unknown}; known: {sorted(models)}"
            )
        models = {m: models[m] for m in ev["models"]}
    return models


def eval_model_regex():
    return "|".join(re.escape(m) for m in eval_model_specs()) or "(?!x)x"


def eval_plan_models():
    """What the plan records of each model (not the rule input)."""
    return {
        n: {k: v for k, v in m.items() if k != "input"}
        for n, m in eval_model_specs().items()
    }


def eval_plan_tasks():
    suites = sorted({s["suite"] for s in config["evaluation"]["evalsets"].values()})
    return [f"data/frozen/{s}/tasks.parquet" for s in suites]


def eval_model_input(wildcards):
    return eval_model_specs()[wildcards.model]["input"]


def eval_model_dir(wildcards):
    return eval_model_specs()[wildcards.model]["dir"]


def eval_set_tasks(wildcards):
    suite = config["evaluation"]["evalsets"][wildcards.evalset]["suite"]
    return f"data/frozen/{suite}/tasks.parquet"


def eval_job_cfg():
    """The settings of one eval_model job (the plan carries the models and eval sets)."""
    ev = config["evaluation"]
    return {k: ev[k] for k in ("seed", "batch_size", "limits", "faults")}


def eval_targets():
    return ["results/eval/plan.json"] + expand(
        "results/eval/{model}/{evalset}/scores.json",
        model=eval_model_specs(),
        evalset=config["evaluation"]["evalsets"],
    )


# --- the stop-or-continue study (rules/stop.smk) --------------------------------------------


def stop_models():
    """Models whose eval trajectories are studied (config stop.models; default: eval models)."""
    return list(config["stop"]["models"]) or eval_models()


def stop_evalsets():
    return list(config["stop"]["evalsets"]) or list(config["evaluation"]["evalsets"])


def stop_study():
    return Path(config["stop"]["protocol"]).stem


def stop_receipt():
    return f"logs/protocols/{stop_study()}.json"


def stop_slots(wildcards):
    return [eval_slots(wildcards.model, e) for e in stop_evalsets()]


def stop_tasks():
    ev = config["evaluation"]["evalsets"]
    suites = sorted({ev[e]["suite"] for e in stop_evalsets()})
    return [f"data/frozen/{s}/tasks.parquet" for s in suites]


def stop_checkpoints():
    return [f"results/stop/{m}/checkpoints.parquet" for m in stop_models()]


def stop_results():
    """The study's evaluation when it runs (render_tables waits for it: its rules are costed)."""
    return ["results/stop/eval.json"] if config["stop"]["enabled"] else []


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
    return ["paper/tables/stop_section.tex", "paper/figures/stop_curve.pdf"]
