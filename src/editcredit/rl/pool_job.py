"""The training_pool job: the pool every run trains on, screened by the base policy
(:mod:`editcredit.rl.pool`); writes ``results/training/pool.json`` and the screen's rollouts."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from editcredit.agent.trajectory import TrajectoryRow, write_trajectories
from editcredit.audit.base_pin import guard_base
from editcredit.io.provenance import write_result_json
from editcredit.io.volatile import write_volatile
from editcredit.job_settings import PoolJobSettings
from editcredit.policy.base_job import training_tasks
from editcredit.rl.pool import SCREEN_KEY, screen_candidates, screen_counts, screened_pool


class ScreenedCandidate(TypedDict):
    """A candidate of the screen and its unmasked episodes (:func:`screen_counts`)."""

    instance_id: str
    episodes: int  # its unmasked episodes
    solved: int  # ... that resolved it (Y 1)


class _PoolHead(TypedDict):
    pool_size: int  # config training.pool_size (0: every eligible task)


class _PoolScreen(_PoolHead, total=False):
    screen: dict[
        str, int
    ]  # the screen's settings (training.pool_screen: candidates, samples, seed)
    candidates: list[ScreenedCandidate]  # in candidate order
    base_check: dict[str, Any]  # the screening base's check (audit.base_pin.check_base)
    screen_skipped: str  # why no screen ran, where one was configured


class _PoolBody(_PoolScreen):
    pool: list[str]  # the pool's task ids, in pool order


class PoolRecord(_PoolBody, total=False):
    """``results/training/pool.json`` (written with sorted keys), in the order the job builds
    it: the size, the screen (its settings, candidates and base check) or why it was skipped,
    the pool, and the quarantine it excluded."""

    quarantined: dict[str, str]  # task -> why config training.quarantine excludes it


@dataclass(frozen=True)
class PoolJob:
    """The files of the training_pool job (its inputs and outputs)."""

    base_model: str  # the base model's HF directory (it plays the screen)
    tasks: str  # data/frozen/{suite}/tasks.parquet
    controls: str | None  # results/controls/{suite}/summary.json
    out: str  # results/training/pool.json
    screen: str  # results/training/pool_screen.parquet (the screen's rollouts; empty without one)
    gold_times: str | None = None  # results/controls/{suite}/tasks (the gold runs' times)


def play_screen(
    job: PoolJob, settings: PoolJobSettings, candidates: list, gpus: int, threads: int
) -> list[dict[str, Any]]:
    """The base policy's ``pool_screen.samples`` episodes of each candidate, graded."""
    from editcredit.agent.environments import environment_factory
    from editcredit.agent.probe import rollout_and_grade
    from editcredit.agent.probe_job import load_policy
    from editcredit.agent.rollout import RolloutConfig
    from editcredit.grading.grader_identity import study_report_store
    from editcredit.rl.train_job import job_device
    from editcredit.sandbox.limits import gold_times_book
    from editcredit.sandbox.memo import GradingMemo
    from editcredit.sandbox.pool import SandboxPool

    book = gold_times_book(job.gold_times)  # a missing directory fails before the model loads
    device = job_device(gpus, threads)
    generator, chat = load_policy(job.base_model, device, settings.generation.to_dict())
    agent_cfg, sandbox_cfg = settings.agent.to_dict(), settings.sandbox.to_dict()
    make_env = environment_factory(agent_cfg, sandbox_cfg)
    screen = settings.pool_screen
    with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, settings.sandbox.workers, book) as pool:
        rows = rollout_and_grade(
            candidates,
            int(screen.samples),
            SCREEN_KEY,
            GradingMemo(pool, store=study_report_store(sandbox_cfg)),
            generator,
            chat,
            RolloutConfig.from_agent(agent_cfg),
            make_env,
            int(screen.seed),
            settings.reward.to_dict(),
            settings.grading.to_dict(),
            int(settings.sandbox.workers),
        )
    return rows


def training_pool_job(
    job: PoolJob,
    settings: PoolJobSettings,
    *,
    gpus: int,
    threads: int,
    config: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]] | None = None,
) -> PoolRecord:
    """Rule training_pool: the candidates, the screen (when ``pool_screen.samples``) and the
    pool, with a receipt naming the base policy that screened them. ``models`` are the
    configured models (their ``receipt_sha256`` pins the screening base); ``config`` is hashed
    into the provenance block, never read."""
    started = time.monotonic()
    quarantine = dict(settings.quarantine or {})
    eligible = training_tasks(job.tasks, job.controls, quarantine)
    screen = settings.pool_screen
    # the pool, required, is added once chosen below
    record: PoolRecord = {"pool_size": int(settings.pool_size)}  # type: ignore[typeddict-item]
    inputs = [job.tasks] + ([job.controls] if job.controls else [])
    known = {}
    rows: list[dict[str, Any]] = []
    size = int(settings.pool_size)
    # no screen when every eligible task is in the pool (pool_size 0, or no more of them than
    # it holds): nothing to choose, nothing to play
    screened = bool(screen.samples) and 0 < size < len(eligible)
    if screened:
        base_check = guard_base(job.base_model, models)
        ids = screen_candidates([t.instance_id for t in eligible], screen.candidates)
        by_id = {t.instance_id: t for t in eligible}
        print(f"training pool: the base policy plays {screen.samples} episodes of {len(ids)} tasks")
        rows = play_screen(job, settings, [by_id[i] for i in ids], gpus, threads)
        counts = screen_counts(rows)
        pool = screened_pool(ids, counts, size)
        record["screen"] = screen.to_dict()
        record["candidates"] = [
            {"instance_id": i, "episodes": counts[i]["episodes"], "solved": counts[i]["solved"]}
            for i in ids
        ]
        inputs.insert(0, job.base_model)
        if base_check is not None:
            record["base_check"] = base_check
            known[job.base_model] = base_check["directory_sha256"]
    else:
        pool = screen_candidates([t.instance_id for t in eligible], size)
        if screen.samples:
            record["screen_skipped"] = f"{len(eligible)} eligible train tasks, pool_size {size}"
    record["pool"] = pool
    if quarantine:
        record["quarantined"] = quarantine
    print(f"training pool: {len(pool)} tasks: {', '.join(pool)}")
    # the screen's rows are trajectory rows (rollout_and_grade's)
    write_trajectories(cast(list[TrajectoryRow], rows), Path(job.screen))
    # not the gold-times directory: its records hold wall-clock seconds (they only set limits)
    write_result_json(job.out, record, inputs, config, known)
    write_volatile(job.out, {"seconds": round(time.monotonic() - started, 2)})
    return record
