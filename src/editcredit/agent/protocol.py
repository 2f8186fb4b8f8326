"""The one environment protocol every task source implements (DESIGN "Boundaries")."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from editcredit.data.task import Task


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

    @property
    @abstractmethod
    def turns(self) -> list[TurnRecord]: ...

    @property
    @abstractmethod
    def end_reason(self) -> str: ...

    @abstractmethod
    def end(self, reason: str) -> None:
        """End the episode from outside (e.g. the context budget ran out)."""
