"""The base_model job: the experts' corpus on the training tasks, then the tiny default fitted on
it (:mod:`editcredit.policy.base_training`), written with its receipt."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

from editcredit.agent.expert_corpus import expert_corpus, expert_environment
from editcredit.layout import base_scope
from editcredit.policy.base_job import training_tasks
from editcredit.policy.base_training import fit_base_model
from editcredit.policy.devices import bind_gpus
from editcredit.protocol.budget import job_guard, write_spend_record
from editcredit.sandbox.limits import GoldTimesBook, gold_times_book
from editcredit.sandbox.pool import SandboxPool
from editcredit.settings import SandboxSettings


def play_expert_corpus(
    tasks: list,
    model_cfg: dict[str, Any],
    agent_cfg: dict[str, Any],
    sandbox_cfg: dict[str, Any],
    guard=None,
    gold_times: GoldTimesBook | None = None,
) -> tuple[list[tuple[list[str], list[str]]], list[list[str]]]:
    """The model's experts played on ``tasks`` in a sandbox pool of the configured backend:
    the episodes and each episode's seed-function identifiers. ``gold_times``: the tasks'
    recorded gold-run times (a task without any is measured with one gold run). The pool has
    ``sandbox.expert_workers`` sandboxes (``sandbox_cfg``, the rule's ``sandbox`` section, is
    read strictly as :class:`~editcredit.settings.SandboxSettings`)."""
    workers = SandboxSettings.from_mapping(sandbox_cfg).expert_workers
    experts = {**model_cfg["experts"], "seed": model_cfg["seed"]}
    backend = sandbox_cfg["backend"]
    with SandboxPool(backend, sandbox_cfg, workers, gold_times) as pool:  # experts only
        make_env = expert_environment(agent_cfg, sandbox_cfg)
        turns = int(agent_cfg["max_turns"])
        return expert_corpus(tasks, pool, experts, make_env, turns, workers, guard)


def base_model_job(
    model_cfg: dict[str, Any],
    agent_cfg: dict[str, Any],
    sandbox_cfg: dict[str, Any],
    tasks_path: str | None,
    controls_path: str | None,
    out_dir: str,
    gpus: int,
    corpus_paths: list[str] | None = None,
    budget: dict[str, Any] | None = None,
    gold_times: str | None = None,
) -> None:
    """Rule base_model: expert episodes on the suite's training tasks (and on the train tasks
    of the model's corpus suites, ``corpus_paths``), then the tiny LM fitted on them (an HF
    directory with its identity receipt in ``out_dir``).

    ``budget`` (config ``budgets.base_model``) caps each trained base: checked before each
    expert batch and each SFT chunk; a cap crossed stops the job with a receipt under
    ``logs/budgets/`` and no model directory. The spend of a completed job is its spend record
    under ``logs/budgets/spend/`` (the model's receipt holds no wall-clock figure).

    ``gold_times`` is the control rule's per-task directory of the suite
    (``results/controls/{suite}/tasks``): the experts' gradings are held to the per-test limits
    of the gold times recorded there; a task without them (a corpus suite's) is measured."""
    out = Path(out_dir)
    guard = job_guard(base_scope(out.name), budget, "config budgets.base_model", gpus=int(gpus))
    device = bind_gpus(int(gpus))
    book = gold_times_book(gold_times)  # a missing directory fails before any work
    # the rule names its suite's tasks (a None would fail in load_tasks)
    tasks = training_tasks(cast(str, tasks_path), controls_path)
    extra = [t for p in corpus_paths or [] for t in training_tasks(p, None)]
    print(f"training the base policy on {len(tasks)} train tasks + {len(extra)} corpus tasks")
    tasks += extra
    start = time.monotonic()
    corpus, names = play_expert_corpus(tasks, model_cfg, agent_cfg, sandbox_cfg, guard, book)
    seconds = time.monotonic() - start
    stats = fit_base_model(corpus, names, model_cfg, out, device, len(tasks), seconds, guard)
    print(json.dumps(stats, indent=1))
    print(f"{out}: spend {json.dumps(guard.ledger())} ({write_spend_record(guard)})")
