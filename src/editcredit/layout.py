"""Every path and name the workflow builds or reads back: one module for rules/*.smk and the
library (docs/outputs.md describes the files).

Names: a training run is ``{arm}-s{seed}`` (``M-s42``; a credit control's run ``T-s42``); an eval
model is ``base``, a run name (the run at the endpoint) or ``{run}-step{N}`` (a diagnostic
checkpoint). Paths are relative to the
repository root and have two forms here: a Snakemake pattern (``SEGMENT``,
``"runs/{run}/step_{step}"``: the rules' outputs) and a function that fills it
(``segment_dir(run, step)``). Reading a path back (``parse_segment_dir``) happens here and
nowhere else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from editcredit.records import ARM_NAMES, CONTROL_ARM_NAMES

# --- names ----------------------------------------------------------------------------------

RUN_REGEX = f"[{''.join(ARM_NAMES)}]-s[0-9]+"
"""A run name of the study's arms: one of the arms (``records.Arm``), ``-s``, the seed."""
TRAINED_RUN_REGEX = f"[{''.join(ARM_NAMES + CONTROL_ARM_NAMES)}]-s[0-9]+"
"""Wildcard constraint of a run name: an arm's run or a credit control's (``records.ControlArm``,
``T-s0``: planned only by ``training.controls``), ``-s``, the seed."""
_RUN = re.compile(r"(?P<arm>[A-Za-z]+)-s(?P<seed>[0-9]+)")


@dataclass(frozen=True)
class Run:
    """A training run: one credit arm trained from one seed."""

    arm: str
    seed: int

    @property
    def name(self) -> str:
        return run_name(self.arm, self.seed)


#: the eval model name of the base policy (every run's start; ``results/eval/base/...``)
BASE_EVAL_MODEL = "base"


def run_name(arm: str, seed: int) -> str:
    """``M-s42``: the name of the run of ``arm`` from training seed ``seed``."""
    return f"{arm}-s{int(seed)}"


def parse_run(name: str) -> Run:
    """The arm and seed of a run name; ValueError for anything else (``base``, ``M-s42-step2``)."""
    match = _RUN.fullmatch(name)
    if not match:
        raise ValueError(f"{name!r} is not a run name {{arm}}-s{{seed}}")
    return Run(match["arm"], int(match["seed"]))


def is_run(name: str) -> bool:
    return _RUN.fullmatch(name) is not None


def plan_runs(plan: dict[str, list[int]]) -> list[str]:
    """Every run of a training plan (arm -> seeds), in plan order."""
    return [run_name(arm, seed) for arm, seeds in plan.items() for seed in seeds]


def diagnostic_model(run: str, step: int) -> str:
    """The eval model name of a run's intermediate checkpoint: ``M-s42-step2``."""
    return f"{run}-step{int(step)}"


def control_run_name(seed: int) -> str:
    """The name the no-learning control replay of a training seed runs under."""
    return f"control-s{int(seed)}"


def names_regex(names) -> str:
    """A wildcard constraint matching exactly the given names (none: matching nothing)."""
    return "|".join(re.escape(str(n)) for n in names) or "(?!x)x"


# --- data, controls, models -------------------------------------------------------------------

FROZEN_TASKS = "data/frozen/{suite}/tasks.parquet"
FROZEN_MANIFEST = "data/frozen/{suite}/manifest.json"
CONTROLS_SUMMARY = "results/controls/{suite}/summary.json"
CONTROLS_TASKS = "results/controls/{suite}/tasks"
BASE_MODEL = "models/base/{model}"
PROBE = "results/base/{model}/probe.json"
PROBE_TRAJECTORIES = "results/base/{model}/probe_trajectories.parquet"


def frozen_tasks(suite: str) -> str:
    return FROZEN_TASKS.format(suite=suite)


def controls_summary(suite: str) -> str:
    return CONTROLS_SUMMARY.format(suite=suite)


def controls_tasks(suite: str) -> str:
    """The control rule's per-task records of a suite (the gold runs' times among them)."""
    return CONTROLS_TASKS.format(suite=suite)


def base_model_dir(model: str) -> str:
    return BASE_MODEL.format(model=model)


# --- training ---------------------------------------------------------------------------------

RUNS = "runs"
"""Where every training run's segments go (the forecast reads the free space there)."""
SEGMENT = "runs/{run}/step_{step}"
"""A training segment's directory (model, optimiser state, rollouts, metrics)."""
TRAINING_POOL = "results/training/pool.json"
"""The training pool every run and control trains on (rule training_pool, rl.pool)."""
TRAINING_POOL_SCREEN = "results/training/pool_screen.parquet"
"""The base policy's screen of the pool's candidates (its rollouts; empty without a screen)."""
CONTROL_REPLAY = "results/training/control/s{seed}.parquet"
CONTROL_REPLAY_RECEIPT = "results/training/control/s{seed}.json"
_SEGMENT = re.compile(r"(?:^|/)runs/(?P<run>[^/]+)/step_(?P<step>[0-9]+)/?$")


def segment_dir(run: str, step: int) -> str:
    return SEGMENT.format(run=run, step=int(step))


def segment_receipt_json(run: str, step: int) -> str:
    """A segment's receipt ``segment.json`` (its volatile facts: the sidecar of it,
    ``io.volatile.volatile_sidecar``)."""
    return f"{segment_dir(run, step)}/segment.json"


def segment_model_dir(run: str, step: int) -> str:
    """The HF model directory inside a segment."""
    return f"{segment_dir(run, step)}/model"


def parse_segment_dir(path: str | Path) -> tuple[str, int]:
    """``(run, step)`` of a segment directory ``runs/{run}/step_{N}``."""
    match = _SEGMENT.search(Path(path).as_posix())
    if not match:
        raise ValueError(f"{path}: not a segment directory runs/{{run}}/step_{{N}}")
    return match["run"], int(match["step"])


def control_replay(seed: int) -> str:
    """The no-learning control of a training seed (the base policy on the seed's draws)."""
    return CONTROL_REPLAY.format(seed=int(seed))


PRUNED = "runs/{run}/pruned/step_{step}.json"
"""What retention (``training.keep_checkpoints``) removed from a segment (rule prune_segment)."""


def pruned_record(run: str, step: int) -> str:
    return PRUNED.format(run=run, step=int(step))


# --- storage ----------------------------------------------------------------------------------

STORAGE_RECEIPT = "logs/storage/{job}/{attempt}.json"
"""The receipt of a job stopped by the storage monitor; ``{attempt}`` counts 1, 2, ... and an
earlier receipt is never overwritten."""


def train_job(run: str, step: int) -> str:
    """The name of a training segment's job in receipts: ``train_segment/M-s42/step_4``."""
    return f"train_segment/{run}/step_{int(step)}"


def eval_job(model: str, evalset: str) -> str:
    """The name of an evaluation job in receipts: ``eval_model/base/holdout``."""
    return f"eval_model/{model}/{evalset}"


def storage_receipt(job: str, attempt: int) -> str:
    return STORAGE_RECEIPT.format(job=job, attempt=int(attempt))


# --- audits -----------------------------------------------------------------------------------

AUDIT = "results/audits/{run}/step_{step}.json"
AUDIT_SUMMARY = "results/audits/summary.parquet"
_AUDIT = re.compile(r"(?P<run>[^/]+)/step_(?P<step>[0-9]+)\.json$")


def audit_json(run: str, step: int) -> str:
    return AUDIT.format(run=run, step=int(step))


def parse_audit_json(path: str | Path) -> tuple[str, int]:
    """``(run, step)`` of an audit ``results/audits/{run}/step_{N}.json``."""
    match = _AUDIT.search(Path(path).as_posix())
    if not match:
        raise ValueError(f"{path}: not an audit path results/audits/{{run}}/step_{{N}}.json")
    return match["run"], int(match["step"])


# --- evaluation -------------------------------------------------------------------------------

EVAL_PLAN = "results/eval/plan.parquet"
EVAL_PLAN_SUMMARY = "results/eval/plan.json"
EVAL_SLOTS = "results/eval/{model}/{evalset}/slots.parquet"
EVAL_PREDICTIONS = "results/eval/{model}/{evalset}/predictions"
EVAL_SCORES = "results/eval/{model}/{evalset}/scores.json"
_EVAL_SLOTS = re.compile(r"results/eval/(?P<model>[^/]+)/(?P<evalset>[^/]+)/slots\.parquet$")


def eval_slots(model: str, evalset: str) -> str:
    return EVAL_SLOTS.format(model=model, evalset=evalset)


def eval_model_scores(model: str, evalset: str) -> str:
    return EVAL_SCORES.format(model=model, evalset=evalset)


def parse_eval_slots(path: str | Path) -> tuple[str, str]:
    """``(model, evalset)`` of ``results/eval/{model}/{evalset}/slots.parquet``."""
    match = _EVAL_SLOTS.search(Path(path).as_posix())
    if not match:
        raise ValueError(f"{path}: not an eval slots path results/eval/{{model}}/{{evalset}}/...")
    return match["model"], match["evalset"]


# --- the stop-or-continue study (METHOD §12) --------------------------------------------------

PROTOCOL_RECEIPT = "logs/protocols/{study}.json"
BUDGET_DIR = "logs/budgets"
"""Receipts of jobs a budget cap stopped (``{scope}-{time}-{pid}.json``), the study ledgers and
the spend records of jobs whose outputs carry no ledger (METHOD §11)."""
STUDY_LEDGER = "logs/budgets/{study}.ledger.jsonl"
"""A study's spend, one line per unit of work of any of its jobs, appended under a file lock."""
SPEND_RECORDS = "logs/budgets/spend"
"""The spend record of each attempt of a job whose output may hold no wall-clock figure (the
base model: its receipt is a function of config and data)."""
STOP_CHECKPOINTS = "results/stop/{model}/checkpoints.parquet"
STOP_CHECKPOINTS_RECEIPT = "results/stop/{model}/checkpoints.json"
STOP_SCORES = "results/stop/scores.parquet"
STOP_POLICIES = "results/stop/policies.json"
STOP_EVAL = "results/stop/eval.json"
STOP_SECTION = "paper/tables/stop_section.tex"
STOP_FIGURE = "paper/figures/stop_curve.{ext}"


def protocol_receipt(study: str) -> str:
    return PROTOCOL_RECEIPT.format(study=study)


def base_scope(model: str) -> str:
    """``base_model-{model}``: the budget scope of a trained base model (receipt names)."""
    return f"base_model-{model}"


def eval_scope(model: str, evalset: str) -> str:
    """``eval-{model}-{evalset}``: the budget scope of one eval_model job (receipt names)."""
    return f"eval-{model}-{evalset}"


def study_ledger(study: str) -> str:
    return STUDY_LEDGER.format(study=study)


def stop_checkpoints(model: str) -> str:
    return STOP_CHECKPOINTS.format(model=model)


# --- statistics and the paper -----------------------------------------------------------------

STATS_SCORES = "results/stats/scores/{evalset}.json"
STATS_PAIRED = "results/stats/paired/{comparison}.json"
STATS_COMPARE = "results/stats/{comparison}.json"
STATS_TRAINING = "results/stats/training/{arm}.json"
REPLAY_SUMMARY = "results/replay/summary.json"
"""The replay check of stored gradings (rule ``replay``)."""
BENCHMARKS = "results/benchmarks"
"""Where every rule's ``benchmark:`` file goes (``{rule}/{wildcards}.tsv`` or ``{rule}.tsv``)."""
PAPER_TABLE = "paper/tables/{name}.tex"
TABLE_TEMPLATE = "paper/templates/{name}.tex.j2"
PAPER_FIGURE = "paper/figures/{name}.{ext}"
PAPER_TEX = "paper/main.tex"
PAPER_PDF = "paper/main.pdf"


def stats_scores(evalset: str) -> str:
    return STATS_SCORES.format(evalset=evalset)


def stats_paired(comparison: str) -> str:
    return STATS_PAIRED.format(comparison=comparison)


def stats_compare(comparison: str) -> str:
    return STATS_COMPARE.format(comparison=comparison)


def stats_training(arm: str) -> str:
    return STATS_TRAINING.format(arm=arm)
