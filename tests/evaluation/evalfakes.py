"""Planted policies for evaluation tests: a chat layout without a tokenizer and a scripted
generator (the action of each turn is a function of the task's first observation); and the
study they play: toy tasks, a fake model directory and a plan for model 'planted'."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from taskfactory import make_calc_task

from editcredit.agent.actions import Action, format_action
from editcredit.data.task import Task
from editcredit.policy.generation import GenerationOutput

FIX = format_action(Action("edit", "calc.py", old="return a - b", new="return a + b"))
WRONG = format_action(Action("edit", "calc.py", old="return a - b", new="return a * b"))


class FakeChat:
    """Every distinct text is one token id; observations and actions alike."""

    pad, eos = 0, 1
    stop_ids = (eos,)

    def __init__(self) -> None:
        self.texts = ["<pad>", "<eos>"]
        self._ids: dict[str, int] = {}

    def token(self, text: str) -> int:
        if text not in self._ids:
            self._ids[text] = len(self.texts)
            self.texts.append(text)
        return self._ids[text]

    def conversation(self, tool: str | None = None) -> FakeConversation:
        return FakeConversation(self)


class FakeConversation:
    """The shape of :class:`editcredit.policy.chat.Conversation`: one token per observation."""

    def __init__(self, chat: FakeChat) -> None:
        self.chat = chat

    def start(self, observation: str) -> list[int]:
        return [self.chat.token("OBS\n" + observation)]

    def observe(self, observation: str) -> list[int]:
        return [self.chat.token("OBS\n" + observation)]

    def reply(self, ids: list[int]) -> str:
        return "".join(self.chat.texts[i] for i in ids if i not in (self.chat.pad, self.chat.eos))


class ScriptedGenerator:
    """``script(first_observation, turn) -> action text``; counts its calls and prompts."""

    def __init__(self, chat: FakeChat, script: Callable[[str, int], str]) -> None:
        self.chat, self.script = chat, script
        self.calls = 0
        self.prompts = 0
        self.seeds: list[int] = []

    def generate(self, prompts, max_new_tokens, temperature, seed):
        self.calls += 1
        self.prompts += len(prompts)
        self.seeds.append(seed)
        out = []
        for prompt in prompts:
            first = self.chat.texts[prompt[0]]
            turn = sum(1 for t in prompt if t == self.chat.eos)
            text = self.script(first, turn)
            out.append(GenerationOutput([self.chat.token(text), self.chat.eos], [0.0, 0.0], True))
        return out


def submit_only(first: str, turn: int) -> str:
    """The planted model whose every patch is empty."""
    return "submit"


def by_task(first: str, turn: int) -> str:
    """Task 0 and 3: fix, run, submit; task 1: run, submit (empty patch); task 2: wrong edit."""
    if "task 1" in first:
        return ["run", "submit"][min(turn, 1)]
    if "task 2" in first:
        return [WRONG, "submit"][min(turn, 1)]
    return [FIX, "run", "submit"][min(turn, 2)]


def calc_tasks(n: int) -> list[Task]:
    base = make_calc_task()
    return [
        base.model_copy(
            update={
                "instance_id": f"toy__calc__{i}",
                "problem_statement": f"task {i}: " + base.problem_statement,
                "split": "holdout",
            }
        )
        for i in range(n)
    ]


def holdout(samples: int, max_tasks: int = 0) -> dict[str, Any]:
    """An eval set of the toy suite's holdout split, ``samples`` per task."""
    return {
        "suite": "toy",
        "splits": ["holdout"],
        "samples": samples,
        "max_tasks": max_tasks,
        "with_training_pool": False,
    }


def plan_planted(
    tasks_path: Path,
    model_dir: Path,
    evalsets: Mapping[str, Any],
    plan: str = "results/eval/plan.parquet",
) -> None:
    """Write the ``plan`` (and its .json summary beside it): model 'planted' on ``evalsets``."""
    from editcredit.evaluation.job import plan_job

    models = {
        "planted": {
            "dir": str(model_dir),
            "run": "",
            "step": 0,
            "diagnostic": False,
            "evalsets": [],
            "samples": 0,
        }
    }
    summary = str(Path(plan).with_suffix(".json"))
    plan_job([str(tasks_path)], models, evalsets, plan, summary, {"c": 1})


def planted_study(
    samples: int, tasks: int = 4, plan: str = "results/eval/plan.parquet"
) -> tuple[Path, Path]:
    """In the cwd: a frozen suite of ``tasks`` toy tasks, a fake model directory, a ``plan`` for
    model 'planted' on eval set 'holdout' with ``samples`` per task."""
    from editcredit.data.freeze import write_parquet

    tasks_path = Path("data/frozen/toy/tasks.parquet")
    tasks_path.parent.mkdir(parents=True)
    write_parquet(calc_tasks(tasks), tasks_path)
    model_dir = Path("models/planted")
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text("{}")
    plan_planted(tasks_path, model_dir, {"holdout": holdout(samples)}, plan)
    return tasks_path, model_dir
