"""Probe a policy: rollouts on train and holdout tasks, graded, with the figures that say
whether it is worth training (METHOD §4 needs reward variance inside groups)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from tqdm import tqdm

from editcredit.agent.environments import EnvironmentMaker
from editcredit.agent.reward import terminal_reward
from editcredit.agent.rollout import Episode, RolloutConfig, run_episodes
from editcredit.agent.trajectory import cut_episode, episode_blocks, trajectory_row
from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, grade_patch
from editcredit.policy.chat import ChatTemplate
from editcredit.policy.generation import Generator


def rollout_and_grade(
    tasks: list[Task],
    samples: int,
    key_prefix: str,
    sandbox,
    generator: Generator,
    chat: ChatTemplate,
    rollout: RolloutConfig,
    make_env: EnvironmentMaker,
    seed: int,
    reward_cfg: Mapping[str, float],
    grading_cfg: Mapping[str, float],
    workers: int,
) -> list[dict[str, Any]]:
    """``samples`` episodes per task, each in a fresh environment of ``make_env``, final
    patches graded with the utility weights of ``grading_cfg`` (config ``grading``); one
    trajectory row each."""
    args = (tasks, samples, key_prefix, sandbox, generator, chat, rollout, make_env, seed)
    played = _play(*args, reward_cfg, grading_cfg, workers, query_credit=False)
    return [row for row, _ in played]


def rollout_grade_and_query(
    tasks: list[Task],
    samples: int,
    key_prefix: str,
    sandbox,
    generator: Generator,
    chat: ChatTemplate,
    rollout: RolloutConfig,
    make_env: EnvironmentMaker,
    seed: int,
    reward_cfg: Mapping[str, float],
    grading_cfg: Mapping[str, float],
    workers: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`rollout_and_grade`'s rows, and for each episode the record of
    :func:`located_credit`: its eligible blocks, cut as training cuts them (the environment's
    ``try_scope``), and the D of its score-blind selected block (the counterfactual graded in
    ``sandbox``), with the task's split."""
    args = (tasks, samples, key_prefix, sandbox, generator, chat, rollout, make_env, seed)
    played = _play(*args, reward_cfg, grading_cfg, workers, query_credit=True)
    return [row for row, _ in played], [cast(dict[str, Any], rec) for _, rec in played]


def _play(
    tasks: list[Task],
    samples: int,
    key_prefix: str,
    sandbox,
    generator: Generator,
    chat: ChatTemplate,
    rollout: RolloutConfig,
    make_env: EnvironmentMaker,
    seed: int,
    reward_cfg: Mapping[str, float],
    grading_cfg: Mapping[str, float],
    workers: int,
    *,
    query_credit: bool,
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    jobs = [(t, f"{key_prefix}:{t.instance_id}:{i}") for t in tasks for i in range(samples)]
    episodes = run_episodes(
        jobs,
        lambda: make_env(sandbox),
        generator,
        chat,
        rollout,
        seed,
        step_workers=workers,
        progress=f"{key_prefix}: {len(jobs)} episodes, turns",
    )

    def finish(episode: Episode) -> tuple[dict[str, Any], dict[str, Any] | None]:
        report = grade_patch(
            episode.task,
            episode.env.final_patch(),
            sandbox,
            float(grading_cfg["f_weight"]),
            float(grading_cfg["g_weight"]),
        )
        fmt = any(t.kind == "format_error" for t in episode.env.turns)
        reward = terminal_reward(
            report, fmt, reward_cfg["format_penalty"], reward_cfg["regression_penalty"]
        )
        # the rows are handed on as plain mappings (probe_figures, the pool's screen)
        row = cast(dict[str, Any], trajectory_row(episode, report, reward))
        if not query_credit:
            return row, None
        task, env = episode.task, episode.env
        record = located_credit(task, env, episode.rollout_key, sandbox, grading_cfg, report)
        return row, {**record, "split": task.split}

    with ThreadPoolExecutor(workers) as ex:
        graded = ex.map(finish, episodes)
        return list(
            tqdm(graded, total=len(episodes), desc=f"{key_prefix}: grading", mininterval=5.0)
        )


def reward_groups(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Rewards of the non-masked samples of each task."""
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if not r["masked"]:
            groups[r["instance_id"]].append(r["reward"])
    return dict(groups)


def share_unequal(groups: dict[str, list[float]]) -> float | None:
    """Share of groups whose rewards are not all equal (None without groups)."""
    return sum(len(set(v)) > 1 for v in groups.values()) / len(groups) if groups else None


def probe_figures(
    train_rows: list[dict[str, Any]],
    holdout_rows: list[dict[str, Any]],
    dev_rows: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Pass rates (train, dev, holdout), mixed-reward groups (train and holdout), format
    errors, multi-block share."""
    import json

    dev_rows = dev_rows or []

    def rate(rows, key):
        vals = [r[key] for r in rows if not r["masked"]]
        return sum(vals) / len(vals) if vals else None

    groups = reward_groups(train_rows)
    holdout_groups = reward_groups(holdout_rows)
    rows = train_rows + dev_rows + holdout_rows
    multi = [len(json.loads(r["edit_blocks"])) >= 2 for r in rows]
    return {
        "train_pass_at_1": rate(train_rows, "Y"),
        "dev_pass_at_1": rate(dev_rows, "Y"),
        "holdout_pass_at_1": rate(holdout_rows, "Y"),
        "train_groups": len(groups),
        "train_groups_with_reward_variance": sum(len(set(v)) > 1 for v in groups.values()),
        "share_groups_with_reward_variance": share_unequal(groups),
        "holdout_groups": len(holdout_groups),
        "holdout_share_groups_with_reward_variance": share_unequal(holdout_groups),
        "format_error_rate": sum(r["format_error"] for r in rows) / len(rows),
        "share_two_or_more_edit_blocks": sum(multi) / len(multi),
        "masked": sum(r["masked"] for r in rows),
        "trajectories": len(rows),
        "end_reasons": dict(sorted(_count(r["end_reason"] for r in rows).items())),
    }


def _count(values) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return dict(out)


__all__ = ["episode_blocks", "probe_figures", "rollout_and_grade", "rollout_grade_and_query"]


def located_credit(
    task: Task,
    env,
    rollout_key: str,
    sandbox,
    grading_cfg,
    final: GradingReport | None = None,
    located: bool | None = None,
) -> dict[str, Any]:
    """The edit blocks of one finished episode, cut by
    :func:`editcredit.agent.trajectory.cut_episode` as training cuts them (by region, every
    seed function's lines, under ``agent.try_scope: function``; ``located`` overrides the
    environment's scope), and the credit of its score-blind selected block:
    ``D = U(final) - U(counterfactual)``, both graded with the weights of ``grading_cfg``
    (None when a grading is unavailable); ``final`` is the final patch's report where it is
    already graded."""
    from editcredit.sandbox.patches import diff_trees

    cut = cut_episode(task, env, rollout_key, located=located)
    blocks, selected = cut.blocks, cut.selected
    weights = float(grading_cfg["f_weight"]), float(grading_cfg["g_weight"])
    if final is None:
        final = grade_patch(task, env.final_patch(), sandbox, *weights)
    d = None
    if selected is not None:
        tree = cut.counterfactual(env.tree, env.store)
        other = grade_patch(
            task, diff_trees(cast(dict[str, str], task.files), tree), sandbox, *weights
        )
        if final.U is not None and other.U is not None:
            d = round(final.U - other.U, 9)
    return {
        "instance_id": task.instance_id,
        "bugs": len(task.bugs or ()),
        "blocks": len(blocks),
        "eligible_blocks": sum(b.eligible for b in blocks),
        "Y": final.Y,
        "D": d,
    }


def credit_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Shares of :func:`located_credit`'s records: trajectories with 2 or more eligible
    blocks and of queried blocks by the sign of D (all, and those of multi-bug tasks)."""

    def share(rows, test):
        return round(sum(map(test, rows)) / len(rows), 4) if rows else None

    multi = [r for r in records if r["bugs"] >= 2]
    queried = [r["D"] for r in records if r["D"] is not None]
    multi_queried = [r["D"] for r in multi if r["D"] is not None]
    return {
        "trajectories": len(records),
        "multi_bug_trajectories": len(multi),
        "pass_at_1": share(records, lambda r: r["Y"] == 1),
        "multi_bug_pass_at_1": share(multi, lambda r: r["Y"] == 1),
        "share_two_or_more_eligible_blocks": share(records, lambda r: r["eligible_blocks"] >= 2),
        "multi_bug_share_two_or_more_eligible_blocks": share(
            multi, lambda r: r["eligible_blocks"] >= 2
        ),
        "queried_blocks": len(queried),
        "share_D_positive": share(queried, lambda d: d > 0),
        "share_D_zero": share(queried, lambda d: d == 0),
        "share_D_negative": share(queried, lambda d: d < 0),
        "multi_bug_queried_blocks": len(multi_queried),
        "multi_bug_share_D_positive": share(multi_queried, lambda d: d > 0),
        "multi_bug_share_D_zero": share(multi_queried, lambda d: d == 0),
        "multi_bug_share_D_negative": share(multi_queried, lambda d: d < 0),
    }
