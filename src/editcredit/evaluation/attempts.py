"""Making attempts: a batch of generations across tasks, and the grading of one patch.

Generation runs every pending slot of a batch together (one ``run_episodes`` call: each turn is
one batched forward pass across tasks). Its trajectories are written to a new Parquet file
before the attempts are journaled; an attempt refers to its row. A generation whose episode hit
an infrastructure failure in one of its own test runs, or whose batch crashed on an
infrastructure error, is a failure before a patch exists.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.agent.environments import EnvironmentMaker
from editcredit.agent.reward import RewardComponents
from editcredit.agent.rollout import RolloutConfig, run_episodes
from editcredit.agent.trajectory import TRAJECTORY_SCHEMA, TrajectoryRow, trajectory_row
from editcredit.data.task import Task
from editcredit.evaluation.ledger import AttemptKind
from editcredit.evaluation.sandboxes import INFRA_ERRORS, CountingSandbox, EpisodeSandbox
from editcredit.evaluation.slots import Attempt, TrajectoryRef
from editcredit.grading.grader import GradingReport, grade_patch
from editcredit.io.hashing import sha256_text

EVAL_TRAJECTORY_SCHEMA = TRAJECTORY_SCHEMA.append(pa.field("sample", pa.int16())).append(
    pa.field("attempt", pa.int16())
)


class EvalTrajectoryRow(TrajectoryRow):
    """One row of an evaluation trajectory file (:data:`EVAL_TRAJECTORY_SCHEMA`): a trajectory
    (ungraded: its grading is the slot file's) and the slot attempt that played it."""

    sample: int  # the slot's sample index
    attempt: int  # the attempt's index at the slot


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def rollout_key(model: str, evalset: str, instance_id: str, sample: int, index: int) -> str:
    """A new identity per attempt: a replacement generation is never the same rollout."""
    return f"eval:{model}:{evalset}:{instance_id}:{sample}:a{index}"


def batch_seed(base_seed: int, keys: Sequence[str]) -> int:
    """The sampling seed of a batch: from the base seed and the attempts it holds (so a
    replacement generation, a new attempt, always draws with a new seed)."""
    h = hashlib.sha256(f"{base_seed}\n".encode())
    for key in keys:
        h.update(key.encode() + b"\n")
    return int.from_bytes(h.digest()[:8], "big") >> 1


@dataclass(frozen=True)
class GenJob:
    """One generation attempt to make."""

    instance_id: str
    sample: int
    index: int
    kind: AttemptKind


class _NotGraded:
    """Eval trajectories are written before grading; the grading lives in the slot file."""

    def model_dump(self, mode: str = "json") -> dict[str, Any]:
        return {}


def generate_batch(
    jobs: Sequence[GenJob],
    tasks: Mapping[str, Task],
    generator,
    chat,
    rollout: RolloutConfig,
    base_seed: int,
    model: str,
    evalset: str,
    sandbox,
    trajectory_dir: Path,
    environment: EnvironmentMaker,
    step_workers: int = 2,
) -> list[Attempt]:
    """Generate every job of the batch together, each episode in a fresh ``environment``
    (:mod:`editcredit.agent.environments`); one attempt per job, whatever happened."""
    keys = [rollout_key(model, evalset, j.instance_id, j.sample, j.index) for j in jobs]
    seed = batch_seed(base_seed, keys)
    started, clock = now(), time.monotonic()

    def make_env():
        return environment(EpisodeSandbox(sandbox))

    common = {"seed": seed, "started": started}
    try:
        episodes = run_episodes(
            [(tasks[j.instance_id], k) for j, k in zip(jobs, keys, strict=True)],
            make_env,
            generator,
            chat,
            rollout,
            seed,
            step_workers=step_workers,
        )
    except INFRA_ERRORS as exc:
        seconds = round(time.monotonic() - clock, 3)
        evidence = {"exception": repr(exc)[-2000:], "batch_size": len(jobs)}
        return [
            Attempt(
                instance_id=j.instance_id,
                sample=j.sample,
                index=j.index,
                kind=j.kind,
                outcome="infra_failure",
                rollout_key=k,
                reason=f"generation failed: {type(exc).__name__}",
                evidence=evidence,
                finished=now(),
                seconds=seconds,
                **common,
            )
            for j, k in zip(jobs, keys, strict=True)
        ]
    rows: list[EvalTrajectoryRow] = []
    for job, episode in zip(jobs, episodes, strict=True):
        fmt = any(t.kind == "format_error" for t in episode.env.turns)
        ungraded = RewardComponents(None, int(fmt), None, None, False)
        # trajectory_row reads the report only through model_dump, which _NotGraded answers
        row = trajectory_row(episode, cast(GradingReport, _NotGraded()), ungraded)
        rows.append({**row, "sample": job.sample, "attempt": job.index})
    path = _new_file(trajectory_dir, f"{seed:016x}")
    _write_rows(rows, path)
    finished, seconds = now(), round(time.monotonic() - clock, 3)
    attempts = []
    for row_number, (job, key, episode) in enumerate(zip(jobs, keys, episodes, strict=True)):
        box = getattr(episode.env, "sandbox", None)  # the bash tool runs no sandbox tests
        box = box if isinstance(box, EpisodeSandbox) else EpisodeSandbox(sandbox)
        patch = episode.env.final_patch()
        failed = bool(box.failures)
        attempts.append(
            Attempt(
                instance_id=job.instance_id,
                sample=job.sample,
                index=job.index,
                kind=job.kind,
                outcome="infra_failure" if failed else "patch",
                rollout_key=key,
                trajectory=TrajectoryRef(path=path.as_posix(), row=row_number, rollout_key=key),
                end_reason=episode.env.end_reason,
                patch=patch,
                patch_sha256=sha256_text(patch),
                reason=(
                    f"infrastructure failure in {len(box.failures)} of the episode's "
                    f"{box.runs} test run(s): the patch is not trusted"
                    if failed
                    else f"episode ended: {episode.env.end_reason}"
                ),
                evidence={"in_episode_failures": box.failures} if failed else {},
                sandbox_runs=box.runs,
                finished=finished,
                seconds=seconds,
                **common,
            )
        )
    return attempts


def _new_file(directory: Path, stem: str) -> Path:
    """A file name not used before in ``directory`` (an earlier file is never overwritten)."""
    directory.mkdir(parents=True, exist_ok=True)
    path, n = directory / f"{stem}.parquet", 0
    while path.exists():
        n += 1
        path = directory / f"{stem}-{n}.parquet"
    return path


def _write_rows(rows: list[EvalTrajectoryRow], path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=EVAL_TRAJECTORY_SCHEMA), tmp)
    tmp.replace(path)


def report_summary(report: GradingReport) -> dict[str, Any]:
    """The report without the raw observations (kept: counts, statuses, the sandbox run)."""
    data = report.model_dump(mode="json", exclude={"sandbox": {"observations"}})
    if report.sandbox is not None:
        obs = report.sandbox.observations
        data["sandbox"]["observed"] = {
            "started": obs.started,
            "finished": obs.finished,
            "items": len(obs.items),
            "collect_errors": len(obs.collect_errors),
        }
    return data


def grade_attempt(
    task: Task,
    generation: Attempt,
    index: int,
    kind: AttemptKind,
    sandbox,
    f_weight: float,
    g_weight: float,
) -> Attempt:
    """Grade the patch of ``generation``; an infrastructure failure is an attempt failure."""
    assert generation.patch is not None and generation.outcome == "patch"
    counter = CountingSandbox(sandbox)
    started, clock = now(), time.monotonic()
    base = {
        "instance_id": generation.instance_id,
        "sample": generation.sample,
        "index": index,
        "kind": kind,
        "of": generation.index,
        "patch_sha256": generation.patch_sha256,
        "started": started,
    }
    try:
        report = grade_patch(task, generation.patch, counter, f_weight, g_weight)
    except INFRA_ERRORS as exc:
        return Attempt(
            **base,
            outcome="infra_failure",
            reason=f"infrastructure failure: {type(exc).__name__} raised by the sandbox",
            evidence={"exception": repr(exc)[-2000:]},
            sandbox_runs=counter.calls,
            finished=now(),
            seconds=round(time.monotonic() - clock, 3),
        )
    summary = report_summary(report)
    if report.outcome == "infrastructure_failure":
        run = report.sandbox
        evidence = {
            "run_status": run.run_status if run else None,
            "exit_code": run.exit_code if run else None,
            "log_tail": run.log_tail if run else "",
            "seconds": run.seconds if run else None,
        }
        return Attempt(
            **base,
            outcome="infra_failure",
            reason=report.reason,
            report=summary,
            evidence=evidence,
            sandbox_runs=counter.calls,
            finished=now(),
            seconds=round(time.monotonic() - clock, 3),
        )
    return Attempt(
        **base,
        outcome="report",
        verdict=report.resolved,
        verdict_kind=report.verdict or "",
        reason=report.reason,
        report=summary,
        sandbox_runs=counter.calls,
        finished=now(),
        seconds=round(time.monotonic() - clock, 3),
    )
