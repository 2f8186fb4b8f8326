"""The one environment protocol every task source implements (DESIGN "Boundaries")."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from editcredit.data.task import Task
from editcredit.io.hashing import sha256_text

content_hash = sha256_text
"""The hash of a file's content in the per-turn change record (path -> before/after)."""


@dataclass
class TurnRecord:
    """What one assistant turn did: its action text, parse result and file changes."""

    turn: int
    action_text: str
    kind: str  # replace | run | submit | format_error
    error: str = ""
    changes: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    observation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "action_text": self.action_text,
            "kind": self.kind,
            "error": self.error,
            "changes": {p: list(v) for p, v in sorted(self.changes.items())},
            "observation": self.observation,
        }


class Environment(ABC):
    """``reset(task) -> observation``; ``step(action) -> (observation, done)``; the per-turn
    file-change record; ``final_patch()``. A task source differs by configuration only."""

    @abstractmethod
    def reset(self, task: Task) -> str: ...

    @abstractmethod
    def step(self, action_text: str) -> tuple[str, bool]: ...

    @abstractmethod
    def final_patch(self) -> str: ...

    tool: ClassVar[str | None] = None
    """The tool the action language is, for a chat template with a tool-call format
    (:mod:`editcredit.policy.tool_calls`); None: actions are plain text."""

    # The turn record and the end reason live here; environments append to ``_turns`` and
    # call ``end``. ``begin_episode`` resets both (from ``reset``).
    _turns: list[TurnRecord]
    _end_reason: str

    def begin_episode(self) -> None:
        self._turns = []
        self._end_reason = ""

    @property
    def turns(self) -> list[TurnRecord]:
        return self._turns

    @property
    def end_reason(self) -> str:
        return self._end_reason

    def end(self, reason: str) -> None:
        """End the episode from outside (e.g. the context budget ran out); the first reason
        stays."""
        if not self._end_reason:
            self._end_reason = reason
