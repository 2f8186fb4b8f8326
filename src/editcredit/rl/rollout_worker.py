"""A rollout worker: plays one task's group of episodes, grades the final patches and, for the
arms that need it, grades the counterfactual artifact of each trajectory's selected block. For
every arm it labels each trajectory's blocks from the task's record (METHOD §3, "Known truth per
block"; no grading): the rows of the step's ``truth.parquet``, and for the truth control (T) the
per-token truth its credit reads.

The worker holds its own policy copy (weights pushed every step), tokenizer and sandbox. The
unit of work is one task group with a seed derived from (run seed, step, task), so results do not
depend on how many workers share a step (METHOD §2-§3; issue: worker-count independence). It runs
in-process or as a Ray actor (`editcredit.rl.workers`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, cast

import torch

from editcredit.agent.edit_blocks import credited_turns
from editcredit.agent.environments import environment_factory
from editcredit.agent.episode_truth import episode_block_truths, truth_rows, truth_tokens
from editcredit.agent.reward import terminal_reward
from editcredit.agent.rollout import Episode, RolloutConfig, run_episodes
from editcredit.agent.trajectory import cut_episode, episode_blocks, trajectory_row
from editcredit.data.block_truth import TRUTH_SCHEMA, has_planted_truth
from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, grade_patch
from editcredit.grading.stored_report import stored_report
from editcredit.records import CreditReason
from editcredit.rl.credit import query_decision, utility
from editcredit.rl.records import CfQuery, GroupResult, RolloutRow, TruthRow
from editcredit.sandbox.memo import GradingMemo
from editcredit.sandbox.patches import diff_trees


@dataclass(frozen=True)
class GroupJob:
    """One task's GRPO group in one step."""

    run: str
    step: int
    task: Task
    samples: int
    seed: int
    query_cf: bool
    query_rate: float
    truth: bool = False
    """Whether the arm's credit reads the known truth per block (``rl.credit.reads_truth``): the
    worker then labels each rollout's blocks from the task's record (the query's ``truth``)."""


def group_seed(seed: int, step: int, instance_id: str) -> int:
    digest = hashlib.sha256(f"{seed}:{step}:{instance_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def rollout_key(run: str, step: int, instance_id: str, sample: int) -> str:
    """Identifies a rollout: (run, step, task, sample index) (METHOD §2)."""
    return f"{run}:{step}:{instance_id}:{sample}"


def report_parts(report: GradingReport) -> list[float] | None:
    """[Y, F, G] of a report, or None when the report is unavailable (infrastructure failure)."""
    if report.outcome != "verdict" or report.Y is None or report.F is None or report.G is None:
        return None
    return [float(report.Y), float(report.F), float(report.G)]


def report_utility(report: GradingReport, f_weight: float, g_weight: float) -> float | None:
    """U of a report, or None when the report is unavailable (infrastructure failure)."""
    parts = report_parts(report)
    return None if parts is None else utility(parts[0], parts[1], parts[2], f_weight, g_weight)


def label_blocks(query: CfQuery, job: GroupJob, episode: Episode) -> None:
    """The known truth of a finished episode's blocks, from the task's record and the
    environment's content store, cut as its credit cuts them (METHOD §3; no grading): its
    labelled blocks as ``query["truth_rows"]`` for every arm, and for an arm whose credit reads
    the truth (T) the per-token truth as ``query["truth"]`` (what
    :func:`~editcredit.agent.episode_truth.played_truth` gives). A task without planted truth
    leaves both empty."""
    if not has_planted_truth(job.task):
        return
    # the environments of tasks with planted truth hold their content store, which the
    # Environment protocol does not name
    env: Any = episode.env
    cut = cut_episode(job.task, env, episode.rollout_key)
    truths = episode_block_truths(job.task, cut.blocks, cut.changes, env.store)
    if job.truth:
        tau = truth_tokens(cut.blocks, truths, episode.turn_of_token, episode.loss_mask)
        query["truth"] = tau.tolist()
    place = {"run": job.run, "step": job.step, "instance_id": job.task.instance_id}
    rows = truth_rows(
        episode.rollout_key, cut.blocks, truths, episode.turn_of_token, episode.loss_mask
    )
    columns = TRUTH_SCHEMA.names  # the record's keys in the file's order
    query["truth_rows"] = [cast(TruthRow, {k: (place | r)[k] for k in columns}) for r in rows]


class RolloutWorker:
    """Policy copy + sandbox; ``run_group`` returns plain, picklable records."""

    def __init__(
        self,
        model_dir: str,
        agent_cfg: dict[str, Any],
        reward_cfg: dict[str, Any],
        grading_cfg: dict[str, Any],
        sandbox_cfg: dict[str, Any],
        threads: int = 1,
        device: str = "cpu",
        generation: dict[str, Any] | None = None,
        gold_times: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """``gold_times``: recorded gold times by task in plain form
        (:meth:`~editcredit.sandbox.limits.GoldTimesBook.timings`; a worker may be a Ray actor
        or a process); the sandbox measures a task without them with one gold run."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from editcredit.grading.grader_identity import study_report_store
        from editcredit.policy.chat import ChatTemplate
        from editcredit.policy.generator_factory import GenerationSettings, make_generator
        from editcredit.sandbox.factory import make_sandbox
        from editcredit.sandbox.limits import GoldTimesBook

        torch.set_num_threads(threads)
        self.device = torch.device(device)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.chat = ChatTemplate(tokenizer)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        # transformers types PreTrainedModel.to through a wrapper that mypy reads as unbound
        self.model.to(self.device).eval()  # type: ignore[arg-type]
        settings = GenerationSettings.from_config(generation)
        self.generator = make_generator(
            settings.backend,
            model_dir,
            self.device,
            stop_ids=self.chat.stop_ids,
            pad_id=self.chat.pad,
            model=self.model,
            vllm=settings.vllm,
            fast=settings.fast,
        )
        self.rollout = RolloutConfig.from_agent(agent_cfg)
        self.reward_cfg = reward_cfg
        self.f_weight = float(grading_cfg["f_weight"])  # the schema's default, never one here
        self.g_weight = float(grading_cfg["g_weight"])
        # each distinct (task, tree, selection) graded once per study: a group's samples, its
        # run actions, its counterfactuals and the other runs on the pool reach the same trees
        book = GoldTimesBook.from_timings(gold_times)
        self.sandbox = GradingMemo(
            make_sandbox(sandbox_cfg["backend"], sandbox_cfg, book),
            store=study_report_store(sandbox_cfg),
        )
        self.make_env = environment_factory(agent_cfg, sandbox_cfg)

    def set_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        self.model.load_state_dict(state_dict)
        push = getattr(self.generator, "load_weights", None)  # an engine with its own copy
        if push is not None:
            push(state_dict)

    def close(self) -> None:
        self.sandbox.close()

    def run_group(self, job: GroupJob) -> GroupResult:
        t0 = time.monotonic()
        keys = [rollout_key(job.run, job.step, job.task.instance_id, i) for i in range(job.samples)]
        autocast = torch.autocast("cuda", torch.bfloat16, enabled=self.device.type == "cuda")
        with autocast:
            episodes = run_episodes(
                [(job.task, k) for k in keys],
                lambda: self.make_env(self.sandbox),
                self.generator,
                self.chat,
                self.rollout,
                job.seed,
                step_workers=1,
            )
        t1 = time.monotonic()
        rows: list[RolloutRow] = []
        queries: list[CfQuery] = []
        for sample, episode in enumerate(episodes):
            report = grade_patch(
                job.task, episode.env.final_patch(), self.sandbox, self.f_weight, self.g_weight
            )
            fmt = any(t.kind == "format_error" for t in episode.env.turns)
            reward = terminal_reward(
                report,
                fmt,
                self.reward_cfg["format_penalty"],
                self.reward_cfg["regression_penalty"],
                in_episode_failures=getattr(episode.env, "infra_failures", 0),
            )
            rows.append(
                RolloutRow(**trajectory_row(episode, report, reward), step=job.step, sample=sample)
            )
            queries.append(self._selection(episode, report))
            label_blocks(queries[-1], job, episode)
        t2 = time.monotonic()
        if job.query_cf:
            for query, episode in zip(queries, episodes, strict=True):
                self._counterfactual(query, episode, job)
        t3 = time.monotonic()
        return {
            "rows": rows,
            "queries": queries,
            "seconds": {"rollout": t1 - t0, "grading": t2 - t1, "counterfactual": t3 - t2},
        }

    def _selection(self, episode: Episode, report: GradingReport) -> CfQuery:
        _, _, selected = episode_blocks(episode)  # by region when tries are scoped to functions
        return {
            "rollout_key": episode.rollout_key,
            "selected_block": None if selected is None else selected.index,
            "credited_turns": [] if selected is None else list(credited_turns(selected)),
            "U_original": report_utility(report, self.f_weight, self.g_weight),
            "parts_original": report_parts(report),
            "sent": False,
            "U_counterfactual": None,
            "parts_counterfactual": None,
            "reason": (
                CreditReason.NO_ELIGIBLE_BLOCK if selected is None else CreditReason.NONE
            ).value,
            "cf_patch": None,
            "cf_report": None,
            "truth": None,
            "truth_rows": [],
        }

    def _counterfactual(self, query: CfQuery, episode: Episode, job: GroupJob) -> None:
        """Grade the final tree with the selected block reverted (METHOD §2), at most once."""
        if query["selected_block"] is None:
            return
        if query["U_original"] is None:
            query["reason"] = CreditReason.ORIGINAL_UNAVAILABLE.value
            return
        if not query_decision(episode.rollout_key, job.query_rate):
            query["reason"] = CreditReason.NOT_QUERIED.value
            return
        # the environments that select blocks hold their tree and its store, which the
        # Environment protocol does not name
        env: Any = episode.env
        # cut as the rollout row's blocks were: by region under agent.try_scope: function, and
        # only the selected block's regions restored then
        cut = cut_episode(episode.task, env, episode.rollout_key)
        tree = cut.counterfactual(env.tree, env.store)
        patch_of = getattr(env, "patch_of", None)  # environments over images diff their base
        # a task without files (an image's) is played in an environment with patch_of
        patch = (
            patch_of(tree) if patch_of else diff_trees(cast(dict[str, str], job.task.files), tree)
        )
        report = grade_patch(job.task, patch, self.sandbox, self.f_weight, self.g_weight)
        query["sent"] = True
        query["U_counterfactual"] = report_utility(report, self.f_weight, self.g_weight)
        query["parts_counterfactual"] = report_parts(report)
        if query["U_counterfactual"] is None:
            query["reason"] = CreditReason.COUNTERFACTUAL_UNAVAILABLE.value
        # the tree graded and its report, as stored: the replay check re-grades a sample
        query["cf_patch"] = patch
        query["cf_report"] = json.dumps(stored_report(report), sort_keys=True)
