"""A fixed set of sandboxes serving many gradings in parallel threads, with progress."""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from tqdm import tqdm

from editcredit.data.task import Task
from editcredit.sandbox.base import Sandbox, SandboxReport, grade_selected
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.limits import GoldTimesBook

T = TypeVar("T")


class SandboxPool:
    """``workers`` sandboxes of one backend; each grading borrows one of them."""

    def __init__(
        self,
        backend: str,
        cfg: dict[str, Any],
        workers: int,
        gold_times: GoldTimesBook | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"sandbox workers must be >= 1, got {workers}")
        self._free: queue.Queue[Sandbox] = queue.Queue()
        self._all: list[Sandbox] = []
        self.gold_times = gold_times if gold_times is not None else GoldTimesBook()
        try:
            for _ in range(workers):
                box = make_sandbox(backend, cfg, self.gold_times)
                self._all.append(box)
                self._free.put(box)
        except BaseException:
            self.close()
            raise
        self.workers = workers

    def map(self, fn: Callable[[Sandbox, Any], T], items: Sequence[Any], desc: str = "") -> list[T]:
        """``fn(sandbox, item)`` for every item, order kept, with a progress bar."""

        def call(item: Any) -> T:
            box = self._free.get()
            try:
                return fn(box, item)
            finally:
                self._free.put(box)

        with ThreadPoolExecutor(self.workers) as ex:
            results = ex.map(call, items)
            return list(
                tqdm(results, total=len(items), desc=desc, disable=not desc, mininterval=2.0)
            )

    def grade(self, task: Task, patch: str, select: list[str] | None = None) -> SandboxReport:
        """Borrow a free sandbox for one grading (the pool quacks like a Sandbox)."""
        box = self._free.get()
        try:
            return grade_selected(box, task, patch, select)
        finally:
            self._free.put(box)

    def limits_for(self, task: Task) -> dict[str, Any]:
        """Per-test limits of ``task`` (the pool's sandboxes share settings and gold times)."""
        return self._all[0].limits_for(task)

    def grade_many(
        self, jobs: Sequence[tuple[Task, str]], desc: str = "grading"
    ) -> list[SandboxReport]:
        return self.map(lambda box, job: box.grade(*job), jobs, desc)

    def close(self) -> None:
        for box in self._all:
            box.close()
        self._all.clear()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
