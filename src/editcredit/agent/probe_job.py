"""The probe job: load a base policy, roll it out on train and holdout tasks, write figures."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import torch

from editcredit.agent.environments import environment_factory
from editcredit.agent.probe import credit_figures, probe_figures, rollout_grade_and_query
from editcredit.agent.rollout import RolloutConfig
from editcredit.agent.trajectory import TrajectoryRow, write_trajectories
from editcredit.data.freeze import load_tasks
from editcredit.grading.grader_identity import study_report_store
from editcredit.io.provenance import write_result_json
from editcredit.io.volatile import write_volatile
from editcredit.job_settings import ProbeJobSettings
from editcredit.policy.devices import bind_gpus
from editcredit.sandbox.limits import gold_times_book
from editcredit.sandbox.memo import GradingMemo
from editcredit.sandbox.pool import SandboxPool

#: What a base policy worth training shows: it solves bugs in functions it never saw (dev and
#: holdout), leaves variance inside groups of new tasks for RL, writes well-formed actions and
#: multi-block trajectories for the credit, and on multi-bug tasks final patches of 2 or more
#: eligible blocks (a target judged only where the suite has multi-bug tasks). Choices are tuned
#: on train and dev, never holdout.
TARGETS = {
    "train_pass_at_1": (0.40, 0.85),
    "dev_pass_at_1": (0.20, 1.0),
    "holdout_pass_at_1": (0.15, 1.0),
    "holdout_share_groups_with_reward_variance": (0.5, 1.0),
    "format_error_rate": (0.0, 0.05),
    "share_two_or_more_edit_blocks": (1 / 3, 1.0),
    "multi_bug_share_two_or_more_eligible_blocks": (0.40, 1.0),
}


def load_policy(model_dir: str, device: torch.device, generation: dict[str, Any] | None = None):
    """The configured generation backend (``generation`` block) and the model's chat ids."""
    from editcredit.policy.generator_factory import load_generator

    return load_generator(model_dir, device, generation)


def probe_job(
    model_dir: str,
    tasks_path: str,
    settings: ProbeJobSettings,
    out_json: str,
    out_trajectories: str,
    *,
    gpus: int,
    config: Mapping[str, Any],
    gold_times: str | None = None,
) -> dict[str, Any]:
    """Rule probe; ``settings`` is what the job reads of the config (the rule's params);
    ``gold_times`` the control rule's per-task directory of the suite
    (``results/controls/{suite}/tasks``), whose recorded gold times limit the gradings (a task
    without them is measured with one gold run)."""
    probe = settings.probe
    book = gold_times_book(gold_times)  # a missing directory fails before the model loads
    device = bind_gpus(int(gpus))
    torch.set_num_threads(int(probe.threads))
    generator, chat = load_policy(model_dir, device, settings.generation.to_dict())
    tasks = load_tasks(tasks_path)
    train = sorted((t for t in tasks if t.split == "train"), key=lambda t: t.instance_id)
    train = train[: int(probe.train_tasks)]
    dev = [t for t in tasks if t.split == "dev"]
    holdout = [t for t in tasks if t.split == "holdout"]
    agent_cfg, sandbox_cfg = settings.agent.to_dict(), settings.sandbox.to_dict()
    rollout = RolloutConfig.from_agent(agent_cfg)
    make_env = environment_factory(agent_cfg, sandbox_cfg)
    seed = int(probe.seed)
    start = time.monotonic()
    workers = int(settings.sandbox.workers)
    reward_cfg, grading_cfg = settings.reward.to_dict(), settings.grading.to_dict()
    with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, workers, book) as shared:
        store = study_report_store(sandbox_cfg)
        pool = GradingMemo(shared, store=store)  # each distinct grading once per study
        common = (pool, generator, chat, rollout, make_env)
        train_rows, train_credit = rollout_grade_and_query(
            train,
            int(probe.train_samples),
            "probe-train",
            *common,
            seed,
            reward_cfg,
            grading_cfg,
            workers,
        )
        dev_rows, dev_credit = rollout_grade_and_query(
            dev,
            int(probe.dev_samples),
            "probe-dev",
            *common,
            seed + 2,
            reward_cfg,
            grading_cfg,
            workers,
        )
        holdout_rows, holdout_credit = rollout_grade_and_query(
            holdout,
            int(probe.holdout_samples),
            "probe-holdout",
            *common,
            seed + 1,
            reward_cfg,
            grading_cfg,
            workers,
        )
    figures = probe_figures(train_rows, holdout_rows, dev_rows)
    # the credit's view of the same episodes: eligible blocks per final patch and the sign of
    # each selected block's D, over every split, then train and dev (what choices are tuned on)
    # apart from the holdout
    everything = train_credit + dev_credit + holdout_credit
    figures.update(
        {
            "multi_bug_share_two_or_more_eligible_blocks": credit_figures(everything)[
                "multi_bug_share_two_or_more_eligible_blocks"
            ],
            "credit": {
                "all": credit_figures(everything),
                "train_dev": credit_figures(train_credit + dev_credit),
                "holdout": credit_figures(holdout_credit),
            },
        }
    )
    # a figure without trajectories to judge (e.g. multi-bug shares on a single-bug suite) is
    # neither met nor missed
    checks = {
        k: None if figures[k] is None else bool(lo <= figures[k] <= hi)
        for k, (lo, hi) in TARGETS.items()
    }
    result = {
        "model": Path(model_dir).name,
        "figures": figures,
        "targets": {k: list(v) for k, v in TARGETS.items()},
        "meets_targets": checks,
        "device": str(device),
    }
    seconds = round(time.monotonic() - start, 2)
    # trajectory_row's rows, which rollout_and_grade hands on as plain mappings
    rows = cast(list[TrajectoryRow], train_rows + dev_rows + holdout_rows)
    write_trajectories(rows, Path(out_trajectories))
    # not the gold-times directory: its records hold wall-clock seconds, which would make
    # every downstream byte depend on the clock (they only set the tests' time limits)
    inputs = [model_dir, tasks_path]
    write_result_json(out_json, result, inputs, config)
    write_volatile(out_json, {"seconds": seconds})  # the wall time: beside, never inside
    print(json.dumps(result, indent=1))
    return result
