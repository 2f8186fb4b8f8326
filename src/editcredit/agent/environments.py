"""Which environment plays an episode: ``agent.environment``, through one factory.

Every place that plays episodes (rollout workers, evaluation attempts, the probe) builds its
environments here, so a study switches between the minibugs action language over an inline tree
and the bash tool over a task's image by configuration alone. :func:`unserved` says, before any
job runs, why a task cannot be played in the chosen environment (the DAG checks every task of
the suites a study plays).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from editcredit.agent.protocol import Environment
from editcredit.data.task import Task

ENVIRONMENTS = ("minibugs", "bash")


def unserved(environment: str, task: Task) -> str | None:
    """Why ``environment`` cannot play ``task``, or None when it can."""
    if environment not in ENVIRONMENTS:
        return f"unknown environment {environment!r} (one of {', '.join(ENVIRONMENTS)})"
    if environment == "minibugs" and task.files is None:
        return "an image task (no inline tree); the minibugs environment edits inline trees only"
    return None


def check_tasks(environment: str, tasks: Iterable[Task], where: str) -> None:
    """Raise one ValueError naming the first task ``environment`` cannot play, and the setting."""
    for task in tasks:
        why = unserved(environment, task)
        if why is not None:
            raise ValueError(
                f"config: agent.environment is {environment!r}, but task {task.instance_id} "
                f"of {where} is {why}; set agent.environment: bash for image tasks"
            )


def bash_settings(agent_cfg: dict[str, Any], sandbox_cfg: dict[str, Any]):
    """The bash tool's budgets and limits: ``agent.bash``, the agent's turn budget and the
    sandbox's image and limits (for inline tasks; an image task brings its own image)."""
    from editcredit.agent.bash_env import BashConfig

    return BashConfig(
        max_turns=int(agent_cfg["max_turns"]),
        image=str(sandbox_cfg["image"]),
        mem_limit=str(sandbox_cfg["mem_limit"]),
        pids_limit=int(sandbox_cfg["pids_limit"]),
        **agent_cfg["bash"],
    )


#: Makes a fresh environment for one episode; its argument is the sandbox that runs the
#: environment's own test action (the minibugs ``run``), or wraps it (evaluation's
#: per-episode failure ledger).
EnvironmentMaker = Callable[[Any], Environment]


def environment_factory(agent_cfg: dict[str, Any], sandbox_cfg: dict[str, Any]) -> EnvironmentMaker:
    """A maker of fresh environments of ``agent.environment`` (one per concurrent episode), from
    the validated ``agent`` and ``sandbox`` sections (their defaults filled by the schema; none
    here).
    The bash environment runs its commands in a container of its own (docker) and leaves all
    grading to the caller; it ignores the sandbox it is given."""
    kind = agent_cfg["environment"]
    turns = int(agent_cfg["max_turns"])
    if kind == "minibugs":
        from editcredit.agent.minibugs_env import MinibugsEnv

        numbers, candidates = bool(agent_cfg["numbered_lines"]), bool(agent_cfg["candidates"])
        scope = str(agent_cfg["try_scope"])
        return lambda sandbox: MinibugsEnv(sandbox, turns, numbers, candidates, scope)
    if kind == "bash":
        from editcredit.agent.bash_env import BashEnv
        from editcredit.sandbox.docker_backend import docker_client
        from editcredit.sandbox.image import ImageTrees

        cfg = bash_settings(agent_cfg, sandbox_cfg)
        trees = ImageTrees(docker_client())
        return lambda sandbox: BashEnv(trees, cfg)
    raise ValueError(f"config: agent.environment: unknown environment {kind!r}")


def declared_tasks(suite: str, suite_cfg: dict[str, Any], frozen: Path) -> list[Task] | None:
    """The tasks a suite holds, read before any job runs: its frozen file when it exists, the
    imported source file of a SWE-bench-format suite otherwise; None for a suite generated
    here (inline trees only) or a source file not there yet."""
    from editcredit.data.freeze import FrozenSuiteError, load_tasks
    from editcredit.suites.swebench_import import import_tasks

    if frozen.is_file():
        try:
            return load_tasks(frozen)
        except FrozenSuiteError:  # a placeholder (snakemake --touch): its own job will say
            return None
    if suite_cfg.get("generator") != "swebench":
        return None
    source = Path(suite_cfg["source"])
    if not source.is_file():
        return None
    template = suite_cfg["image_template"]
    return import_tasks(source, suite, template, float(suite_cfg["timeout_s"]))


def check_played_suites(
    environment: str,
    suites: dict[str, dict[str, Any]],
    played: Iterable[str],
    frozen_tasks: Callable[[str], str],
) -> None:
    """Before any job: every task of every played suite can be played in ``environment``.
    A SWE-bench-format suite with an image template holds image tasks even before its source
    file exists."""
    for name in sorted(set(played)):
        cfg = suites.get(name, {})  # a suite frozen by other means is read from its file
        tasks = declared_tasks(name, cfg, Path(frozen_tasks(name)))
        if tasks is not None:
            check_tasks(environment, tasks, f"suite {name}")
        elif environment == "minibugs" and cfg.get("image_template"):
            raise ValueError(
                f"config: agent.environment is 'minibugs', but suite {name} imports image tasks "
                f"(suites.{name}.image_template); set agent.environment: bash"
            )
