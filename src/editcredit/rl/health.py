"""Training health (METHOD §5): counterfactual availability alerts, recorded and printed.

Nothing restarts by itself and nothing is chosen by reward: an alert is a line in the metrics and
the log. The monitor's state travels with the segment state so alerts span segments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class HealthMonitor:
    """Alerts on CF queries: ``streak_limit`` consecutive unavailable, or availability below
    ``min_availability`` over the last ``window`` queries (once that many were made)."""

    streak_limit: int
    window: int
    min_availability: float
    history: list[bool] = field(default_factory=list)
    streak: int = 0

    def observe(self, available: list[bool]) -> list[str]:
        """Record one step's attempted queries (in order); return the alerts raised."""
        alerts: list[str] = []
        for ok in available:
            self.history.append(bool(ok))
            self.streak = 0 if ok else self.streak + 1
            if self.streak == self.streak_limit:
                alerts.append(f"cf_unavailable_streak: {self.streak} consecutive unavailable")
        self.history = self.history[-self.window :]
        if available and len(self.history) == self.window:
            share = sum(self.history) / self.window
            if share < self.min_availability:
                alerts.append(
                    f"cf_availability_low: {share:.1%} available in the last {self.window} "
                    f"queries (< {self.min_availability:.0%})"
                )
        return alerts

    def state(self) -> dict[str, Any]:
        return {"history": list(self.history), "streak": self.streak}

    def restore(self, state: dict[str, Any]) -> None:
        self.history = [bool(x) for x in state.get("history", [])]
        self.streak = int(state.get("streak", 0))
