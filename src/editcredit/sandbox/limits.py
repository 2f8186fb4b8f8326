"""Per-test time limits of a graded run, from the task's measured gold-run times (METHOD §6).

A test's limit is ``max(floor_s, factor * its gold-run seconds)``; collection's is
``max(collect_floor_s, collect_factor * the gold run's collection seconds)``; both are scaled by
``sandbox.timeout_factor``. Beside its wall-clock limit a test has a CPU-time limit,
``max(cpu_floor_s, factor * its gold-run seconds)`` (a test's gold wall-clock seconds bound its
CPU seconds), read by the runner from outside the test process: a loop burns CPU seconds at
the rate the cores give it, so it is told in ``cpu_floor_s`` of CPU, while a correct test
under load spends the same CPU seconds however slow its clock runs (``cpu_floor_s`` = 0: no
CPU-time limit). A test the gold run did not time (a sentinel, a new
parametrization) gets the limit of the slowest timed test. Without gold times (a task never
controlled, a gold run that did not finish) every limit is its floor.

Gold times are recorded by the control rule (the gold run's ``timings``) and read back with
:func:`load_gold_times`; every job that grades starts its sandboxes from those records
(:func:`gold_times_book`). A sandbox runs a task it has no times for (a task never controlled,
a gold run that did not finish) against the floors first, and measures it with one gold run of
its own (:class:`GoldTimesBook`) only when that run reached a floor (``Sandbox.grade``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editcredit.config import section_config
from editcredit.settings import TestLimits

#: ``sandbox.test_limits``, as the settings tree types it; config/schema.yaml holds each key's
#: meaning, default and bounds.
LimitSettings = TestLimits


def limit_settings(cfg: Mapping[str, Any] | None) -> LimitSettings:
    """The limits of a ``sandbox.test_limits`` mapping, validated and its defaults filled by the
    schema (None: every default); ConfigError (a ValueError) names a bad key."""
    section = section_config("sandbox.test_limits", cfg)
    return LimitSettings.from_mapping(section, "sandbox.test_limits")


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

    def to_timings(self) -> dict[str, Any]:
        """The plain form :meth:`from_timings` reads back (picklable, JSON-able)."""
        return {"collect_s": self.collect_s, "tests": dict(self.tests)}


def per_test_limits(
    gold: GoldTimes | None, settings: LimitSettings, timeout_factor: float
) -> dict[str, Any]:
    """The ``limits`` of a guest request: per-test seconds, a default, collection, the cap;
    ``gold_timed``: the task's gold run collected and ran in time (its times are known);
    ``cpu``: the per-test CPU-time limits and their default (absent when ``cpu_floor_s`` is 0)."""
    tests = gold.tests if gold else {}
    slowest = max(tests.values(), default=0.0)

    def limit(seconds: float, factor: float, floor: float) -> float:
        return round(max(floor, factor * seconds) * timeout_factor, 3)

    cpu = {}
    if settings.cpu_floor_s > 0:
        cpu_floor = settings.cpu_floor_s
        cpu = {
            "cpu": {
                "tests": {n: limit(s, settings.factor, cpu_floor) for n, s in tests.items()},
                "default_s": limit(slowest, settings.factor, cpu_floor),
            }
        }
    return {
        "tests": {n: limit(s, settings.factor, settings.floor_s) for n, s in tests.items()},
        "default_s": limit(slowest, settings.factor, settings.floor_s),
        "collect_s": limit(
            gold.collect_s if gold else 0.0, settings.collect_factor, settings.collect_floor_s
        ),
        "max_timeouts": int(settings.max_timeouts),
        "gold_timed": gold is not None,
        **cpu,
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
        self._times: dict[str, GoldTimes | None] = dict(times or {})
        self._lock = threading.Lock()

    @classmethod
    def from_timings(cls, timings: Mapping[str, Mapping[str, Any]] | None) -> GoldTimesBook:
        """A book from plain ``instance_id -> {"collect_s", "tests"}`` (:meth:`timings`): what a
        rollout worker, a Ray actor or a process, is given."""
        times = {i: GoldTimes.from_timings(dict(t)) for i, t in (timings or {}).items()}
        return cls({i: t for i, t in times.items() if t is not None})

    def timings(self, ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The known times in plain form (of the tasks ``ids`` only, when given); a task
        measured without times is left out (a sandbox built from it measures it again)."""
        with self._lock:
            wanted = self._times if ids is None else set(ids)
            return {
                i: t.to_timings()
                for i, t in sorted(self._times.items())
                if t is not None and i in wanted
            }

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


def gold_times_book(controls_dirs: str | Path | Iterable[str | Path] | None) -> GoldTimesBook:
    """A book of the gold times the control rule recorded in ``controls_dirs`` (its per-task
    directories, ``results/controls/{suite}/tasks``; one path, several, or none: an empty book).
    A task without recorded times (its gold run did not finish) is absent, so a sandbox still
    measures it. A directory that is not there is a ValueError naming it; so is one task timed
    differently by two directories."""
    if not controls_dirs:
        dirs: list[str | Path] = []
    elif isinstance(controls_dirs, (str, Path)):
        dirs = [controls_dirs]
    else:
        dirs = list(controls_dirs)
    times: dict[str, GoldTimes] = {}
    for d in dirs:
        if not Path(d).is_dir():
            raise ValueError(f"{d}: no control rule's per-task directory (recorded gold times)")
        for instance_id, t in load_gold_times(d).items():
            if times.setdefault(instance_id, t) != t:
                raise ValueError(f"{d}: {instance_id} has other gold times in another directory")
    return GoldTimesBook(times)
