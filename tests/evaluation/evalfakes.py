"""Planted policies for evaluation tests: a chat layout without a tokenizer and a scripted
generator (the action of each turn is a function of the task's first observation)."""

from __future__ import annotations

from collections.abc import Callable

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
