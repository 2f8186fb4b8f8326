"""One builder for the jobs' settings records (editcredit.job_settings) in tests: the
repository config, with dotted-key overrides, through the typed tree the workflow builds."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from taskfactory import CONFIG

from editcredit.settings import Settings

T = TypeVar("T")


def job_config(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A deep copy of the repository config with ``{"training.grpo.lr": 0.01, ...}`` set (a
    key the config does not know fails in :func:`job_settings`, naming its path)."""
    config = copy.deepcopy(CONFIG)
    for dotted, value in (overrides or {}).items():
        *parents, leaf = dotted.split(".")
        node = config
        for key in parents:
            node = node[key]
        node[leaf] = copy.deepcopy(value)
    return config


def job_settings(record: type[T], overrides: Mapping[str, Any] | None = None) -> T:
    """``record.from_settings`` of the overridden config, as rules/common.smk builds it."""
    return record.from_settings(Settings.from_config(job_config(overrides)))


#: Rollout overrides the training tests share: no Ray, one in-process worker.
NO_RAY = {
    "training.ray.enabled": False,
    "training.ray.address": "",
    "training.ray.num_workers": 1,
}


def eval_files(
    model_dir,
    tasks,
    model: str = "planted",
    evalset: str = "holdout",
    plan: str | None = None,
    gold_times: str | None = None,
):
    """The files of one eval_model job, at the workflow's paths (relative to the cwd);
    ``gold_times`` the control rule's per-task directory (None: every task measured)."""
    from editcredit import layout
    from editcredit.evaluation.job import EvalModelJob

    return EvalModelJob(
        model=model,
        evalset=evalset,
        plan=plan or layout.EVAL_PLAN,
        model_dir=str(model_dir),
        tasks=str(tasks),
        slots=layout.eval_slots(model, evalset),
        predictions=layout.EVAL_PREDICTIONS.format(model=model, evalset=evalset),
        gold_times=gold_times,
    )


def eval_settings(overrides: Mapping[str, Any] | None = None):
    """An eval_model job's settings: a short episode budget, the local sandbox (tests plant
    their own), ``overrides`` on top."""
    from editcredit.job_settings import EvalModelSettings

    short = {
        "agent.max_turns": 4,
        "agent.max_new_tokens": 8,
        "agent.max_context_tokens": 4096,
        "sandbox.backend": "local",
        "sandbox.workers": 2,
        "sandbox.image": "x",
        "sandbox.timeout_factor": 1.0,
    }
    return job_settings(EvalModelSettings, {**short, **(overrides or {})})


#: A short toy segment: small groups, a large step size, short episodes, no Ray.
TOY_SEGMENT = {
    **NO_RAY,
    "training.grpo.tasks_per_step": 2,
    "training.grpo.group_size": 3,
    "training.grpo.micro_batch_size": 4,
    "training.grpo.lr": 0.01,
    "agent.max_turns": 3,
    "agent.max_new_tokens": 24,
}


def run_segment(run, step, previous, out, tasks, overrides=None, gold_times=None, **kw):
    """``train_segment_job`` of one segment of ``run`` ending at ``step``, written to ``out``
    (gate receipts beside it unless ``gate_dir`` is given), with the overridden config;
    ``gold_times`` the control rule's per-task directory (None: every task measured)."""
    from editcredit.job_settings import SegmentSettings
    from editcredit.rl.train_job import SegmentJob, train_segment_job

    job = SegmentJob(
        run=run,
        step=step,
        previous=str(previous),
        tasks=str(tasks),
        controls=None,
        out_dir=str(out),
        gold_times=gold_times,
    )
    kw.setdefault("gate_dir", str(Path(out).parent / "gates"))
    settings = job_settings(SegmentSettings, overrides)
    return train_segment_job(job, settings, gpus=0, threads=1, config={"test": True}, **kw)


def run_control_replay(seed, base, out, tasks, overrides=None, gold_times=None, **kw):
    """``control_replay_job`` of ``seed`` from ``base`` to ``out``, with the overridden config
    (``kw``: the job's keywords, such as ``budget``; ``gold_times`` the control rule's per-task
    directory, None: every task measured)."""
    from editcredit.job_settings import ControlReplaySettings
    from editcredit.rl.train_job import ControlReplayJob, control_replay_job

    job = ControlReplayJob(
        seed=seed,
        base_model=str(base),
        tasks=str(tasks),
        controls=None,
        out=str(out),
        gold_times=gold_times,
    )
    settings = job_settings(ControlReplaySettings, overrides)
    return control_replay_job(job, settings, gpus=0, threads=1, config={"test": True}, **kw)
