"""The expert corpus of the embedded default's base policy: scripted experts (the oracle, or the
searching expert that sees only what the agent sees) play the real environment on the train
tasks; each episode's (observations, actions) and its seed function's identifiers.
:func:`editcredit.policy.base_training.fit_base_model` trains the tiny LM on it.
"""

from __future__ import annotations

import ast
import builtins
import random
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from tqdm import tqdm

from editcredit.agent.environments import EnvironmentMaker, environment_factory
from editcredit.agent.experts import expert_actions, run_expert_episode
from editcredit.agent.search_expert import search_episode
from editcredit.data.task import Task
from editcredit.protocol.budget import BudgetGuard
from editcredit.sandbox.memo import GradingMemo

#: expert episodes played between two budget checks
EXPERT_BATCH = 64


def expert_environment(agent_cfg: dict[str, Any], sandbox_cfg: dict[str, Any]) -> EnvironmentMaker:
    """The environment the scripted experts play: the configured one, which must be minibugs
    (the experts write its action language)."""
    if agent_cfg["environment"] != "minibugs":
        raise ValueError(
            f"config: agent.environment is {agent_cfg['environment']!r}; the scripted experts "
            "that train a base ('source: train') write the minibugs action language"
        )
    return environment_factory(agent_cfg, sandbox_cfg)


def round_robin(keys: Sequence[Hashable]) -> list[int]:
    """Job indices in round-robin order over their keys (tasks): every task's first episode,
    then every task's second, ...; within a round, the jobs' own order."""
    seen: Counter = Counter()
    rank = []
    for key in keys:
        rank.append(seen[key])
        seen[key] += 1
    return sorted(range(len(keys)), key=lambda i: (rank[i], i))


def play_batches(
    play: Callable[[Any], Any],
    jobs: Sequence[Any],
    memo: GradingMemo,
    workers: int,
    budget: BudgetGuard | None,
    keys: Sequence[Hashable] | None = None,
) -> list[Any]:
    """``play`` each job on ``workers`` threads, :data:`EXPERT_BATCH` jobs at a time; with a
    ``budget`` each batch is checked before it starts and its gradings and wall time added
    after. With ``keys`` (each job's task) the jobs are played round-robin over the tasks, so
    that concurrent workers meet different tasks instead of waiting for each other's shared
    gradings. The results come back in the jobs' order, and the episodes are the same whatever
    the order and batching (the memo's reports are the trees' own)."""
    order = round_robin(keys) if keys is not None else list(range(len(jobs)))
    out: list[Any] = [None] * len(jobs)
    with ThreadPoolExecutor(workers) as ex:
        for start in range(0, len(order), EXPERT_BATCH):
            batch = order[start : start + EXPERT_BATCH]
            if budget is not None:
                budget.check(
                    f"expert batch {start // EXPERT_BATCH + 1} (episodes {start + 1}..)", "expert"
                )
            clock, graded = time.monotonic(), memo.misses
            for index, episode in zip(batch, ex.map(lambda i: play(jobs[i]), batch), strict=True):
                out[index] = episode
            if budget is not None:
                seconds = time.monotonic() - clock
                budget.add(
                    {"gradings": memo.misses - graded, "wall_seconds": seconds}, unit="expert"
                )
    return out


def expert_corpus(
    tasks: list[Task],
    sandbox,
    cfg: dict[str, Any],
    make_env: EnvironmentMaker,
    max_turns: int,
    workers: int,
    budget: BudgetGuard | None = None,
) -> tuple[list[tuple[list[str], list[str]]], list[list[str]]]:
    """Expert episodes (observations, actions), played through the real environment (fresh
    ones from ``make_env``), and the identifiers of each episode's seed function (its name
    first). With a ``budget``, checked before each batch of :data:`EXPERT_BATCH` episodes."""
    if cfg["kind"] == "search":
        return search_corpus(tasks, sandbox, cfg, make_env, max_turns, workers, budget)
    jobs = []
    style = str(cfg["fragment_style"])
    for task in tasks:
        for k in range(int(cfg["episodes_per_task"])):
            rng = random.Random(f"{cfg['seed']}:{task.instance_id}:{k}")
            actions = expert_actions(
                task, rng, float(cfg["detour_prob"]), float(cfg["run_prob"]), style
            )
            if actions:
                jobs.append((task, actions))
    memo = GradingMemo(sandbox, keep_timeouts=True)  # a looping tree costs its limits once
    episodes = play_batches(
        lambda job: run_expert_episode(make_env(memo), *job),
        jobs,
        memo,
        workers,
        budget,
        [task.instance_id for task, _ in jobs],
    )
    return episodes, [seed_identifiers(task) for task, _ in jobs]


def search_corpus(
    tasks: list[Task],
    sandbox,
    cfg: dict[str, Any],
    make_env: EnvironmentMaker,
    max_turns: int,
    workers: int,
    budget: BudgetGuard | None = None,
) -> tuple[list[tuple[list[str], list[str]]], list[list[str]]]:
    """Episodes of the searching expert (it sees only what the agent sees), played through
    the real environment, and each episode's seed-function identifiers."""
    weights = {str(k): float(v) for k, v in cfg["search_weights"].items()}
    pool = int(cfg["search_pool"])
    style = str(cfg["fragment_style"])
    jobs = [
        (task, random.Random(f"{cfg['seed']}:{task.instance_id}:{k}"))
        for task in tasks
        for k in range(int(cfg["episodes_per_task"]))
    ]
    memo = GradingMemo(sandbox, keep_timeouts=True)  # a looping tree costs its limits once

    def play(job):
        task, rng = job
        env = make_env(memo)
        return search_episode(env, task, rng, weights, max_turns, style, pool, str(cfg["seed"]))

    with tqdm(total=len(jobs), desc="experts", mininterval=5) as bar:

        def played(job):
            episode = play(job)
            bar.update(1)
            return episode

        keys = [task.instance_id for task, _ in jobs]
        episodes = play_batches(played, jobs, memo, workers, budget, keys)
    kept = [(e, seed_identifiers(t)) for e, (t, _) in zip(episodes, jobs, strict=True) if e[1]]
    return [e for e, _ in kept], [n for _, n in kept]


def seed_identifiers(task: Task) -> list[str]:
    """The seed functions' names (a single-bug task's ``meta.seed_function``, or each bug's
    function of a multi-bug task's ``meta.seed_functions``, in that order), then each one's
    parameters and local names of two or more characters (what renaming augmentation may
    change); a function whose file the task lacks or cannot parse gives its name alone."""
    from editcredit.agent.candidates import seed_functions

    located = seed_functions(task)
    names = [function for _, function in located]
    for path, function in located:
        for name in _local_names(task, path, function):
            if name not in names:
                names.append(name)
    return names


def _local_names(task: Task, path: str, function: str) -> list[str]:
    """Parameters and stored names of two or more characters, not builtins, of top-level
    ``function`` in ``path`` of ``task``'s files, in walk order."""
    try:
        # a task without inline files raises TypeError here, caught below
        tree = ast.parse(cast(dict[str, str], task.files)[path])
    except (KeyError, SyntaxError, TypeError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            for sub in ast.walk(node):
                if isinstance(sub, ast.arg):
                    name = sub.arg
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    name = sub.id
                else:
                    continue
                if len(name) >= 2 and name not in names and not hasattr(builtins, name):
                    names.append(name)
    return names
