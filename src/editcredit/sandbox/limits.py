"""Per-test time limits of a graded run, from the task's measured gold-run times (METHOD §6).

A test's limit is ``max(floor_s, factor * its gold-run seconds)``; collection's is
``max(collect_floor_s, collect_factor * the gold run's collection seconds)``; both are scaled by
``sandbox.timeout_factor``. A test the gold run did not time (a sentinel, a new
parametrization) gets the limit of the slowest timed test. Without gold times (a task never
controlled, a gold run that did not finish) every limit is its floor.

Gold times are recorded by the control rule (the gold run's ``timings``) and read back with
:func:`load_gold_times`; a sandbox measures a task it has no times for with one gold run of its
own (:class:`GoldTimesBook`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LimitSettings:
    """``sandbox.test_limits`` of the config (schema.yaml documents every field)."""

    factor: float = 10.0
    floor_s: float = 5.0
    collect_factor: float = 10.0
    collect_floor_s: float = 10.0
    max_timeouts: int = 3
    measure_gold: bool = True

    @classmethod
    def from_config(cls, cfg: dict[str, Any] | None) -> LimitSettings:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"config sandbox.test_limits: unknown field(s) {unknown}")
        settings = cls(**cfg)
        for name in ("factor", "floor_s", "collect_factor", "collect_floor_s"):
            if float(getattr(settings, name)) <= 0:
                raise ValueError(f"config sandbox.test_limits.{name} must be > 0")
        if int(settings.max_timeouts) < 1:
            raise ValueError("config sandbox.test_limits.max_timeouts must be >= 1")
        return settings


@dataclass(frozen=True)
class GoldTimes:
    """Seconds of the gold run: collection, and each test item (setup to teardown)."""

    collect_s: float
    tests: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_timings(cls, timings: dict[str, Any] | None) -> GoldTimes | None:
        if not timings or timings.get("collect_s") is None:
            return None
        return cls(float(timings["collect_s"]), {k: float(v) for k, v in timings["tests"].items()})


def per_test_limits(
    gold: GoldTimes | None, settings: LimitSettings, timeout_factor: float = 1.0
) -> dict[str, Any]:
    """The ``limits`` of a guest request: per-test seconds, a default, collection, the cap;
    ``gold_timed``: the task's gold run collected and ran in time (its times are known)."""
    tests = gold.tests if gold else {}
    slowest = max(tests.values(), default=0.0)

    def limit(seconds: float, factor: float, floor: float) -> float:
        return round(max(floor, factor * seconds) * timeout_factor, 3)

    return {
        "tests": {n: limit(s, settings.factor, settings.floor_s) for n, s in tests.items()},
        "default_s": limit(slowest, settings.factor, settings.floor_s),
        "collect_s": limit(
            gold.collect_s if gold else 0.0, settings.collect_factor, settings.collect_floor_s
        ),
        "max_timeouts": int(settings.max_timeouts),
        "gold_timed": gold is not None,
    }


def run_budget_s(timeout_s: float, limits: dict[str, Any] | None) -> float:
    """Wall-clock cap of the whole guest run: the run's own limit, plus a test (or collection)
    still within its own limit at the run's limit, plus for each allowed per-test timeout the
    timed-out test, a new collection, and its rerun alone, plus a collection rerun."""
    if not limits:
        return timeout_s
    longest = max([limits["default_s"], *limits["tests"].values()])
    per_timeout = 2 * (longest + limits["collect_s"]) + 1.0
    last = max(longest, limits["collect_s"])
    return timeout_s + last + limits["max_timeouts"] * per_timeout + limits["collect_s"] + 1.0


def load_gold_times(controls_dir: str | Path) -> dict[str, GoldTimes]:
    """instance_id -> gold times from the control rule's per-task JSON files."""
    out = {}
    for path in sorted(Path(controls_dir).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            timings = ((record.get("gold") or {}).get("sandbox") or {}).get("timings")
        except (OSError, ValueError, AttributeError) as exc:
            raise ValueError(f"{path}: not a control record ({exc})") from None
        times = GoldTimes.from_timings(timings)
        if times is not None:
            out[record["instance_id"]] = times
    return out


class GoldTimesBook:
    """Gold times by task, shared by the sandboxes of a pool (thread-safe)."""

    def __init__(self, times: dict[str, GoldTimes] | None = None) -> None:
        self._times = dict(times or {})
        self._lock = threading.Lock()

    def get(self, instance_id: str) -> GoldTimes | None:
        with self._lock:
            return self._times.get(instance_id)

    def known(self, instance_id: str) -> bool:
        with self._lock:
            return instance_id in self._times

    def put(self, instance_id: str, times: GoldTimes | None) -> None:
        """Record a measurement (None: measured, but the gold run gave no times)."""
        with self._lock:
            self._times.setdefault(instance_id, times)
