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


def endpoint_segments():
    end = config["training"]["endpoint_step"]
    return [f"runs/{run}/step_{end}" for run in run_names()]
