"""Budgets declared before a job starts, checked before each step (METHOD §11).

A :class:`Budget` caps what a run or a study may spend: ``steps``, generated ``tokens``, sandbox
``gradings``, ``gpu_hours`` and ``wall_seconds`` (0: no cap). A :class:`BudgetGuard` carries what
was spent so far (earlier segments of the run included) and, before each step, projects the
step's cost as the largest step measured so far; when spent plus projection would cross a cap it
writes a receipt under ``logs/budgets/`` and raises :class:`BudgetExceeded`: the job stops there,
never truncating silently, and writes no partial output. Attempts that failed on infrastructure
are counted apart from the spend (``infra_failures``), so the ledger shows them beside the budget.

The caps never decide how far a result trains: a run either completes within its budget, with the
same bytes as without one, or stops with a receipt and no checkpoint.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editcredit.audit.provenance import atomic_write_text

#: the spend a budget can cap, in the order receipts list them
COST_KEYS = ("steps", "tokens", "gradings", "gpu_hours", "wall_seconds")
DEFAULT_RECEIPT_DIR = Path("logs/budgets")


class BudgetExceeded(RuntimeError):
    """A cap would be crossed by the next step; ``receipt`` is the file that says so."""

    def __init__(self, message: str, receipt: Path) -> None:
        super().__init__(message)
        self.receipt = receipt


@dataclass(frozen=True)
class Budget:
    """Caps per cost key; 0 means no cap."""

    caps: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any] | None, where: str = "budget") -> Budget:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(COST_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown budget keys {unknown}; known {list(COST_KEYS)}")
        caps = {}
        for key, value in cfg.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{where}.{key}: a cap is a number >= 0 (0: none), got {value!r}")
            caps[key] = float(value)
        return cls(caps)

    def capped(self) -> dict[str, float]:
        return {k: v for k, v in self.caps.items() if v > 0}


def zero_cost() -> dict[str, float]:
    return dict.fromkeys(COST_KEYS, 0.0)


class BudgetGuard:
    """What a job has spent against its budget; :meth:`check` before each step."""

    def __init__(
        self,
        scope: str,
        budget: Budget,
        spent: Mapping[str, float] | None = None,
        infra_failures: int = 0,
        receipt_dir: str | Path = DEFAULT_RECEIPT_DIR,
        gpus: int = 0,
    ) -> None:
        self.scope = scope
        self.gpus = int(gpus)
        self.budget = budget
        self.spent = {**zero_cost(), **{k: float(v) for k, v in (spent or {}).items()}}
        self.infra_failures = int(infra_failures)
        self.largest_step = zero_cost()
        self.receipt_dir = Path(receipt_dir)

    def projected(self) -> dict[str, float]:
        """Spent so far plus one more step as large as the largest measured (steps: +1)."""
        step = {**self.largest_step, "steps": 1.0}
        return {k: self.spent[k] + step[k] for k in COST_KEYS}

    def check(self, step: int | str) -> None:
        """Before step ``step``: raise :class:`BudgetExceeded` with a receipt when the projected
        spend would cross a cap."""
        projected = self.projected()
        crossed = {
            k: {"cap": cap, "spent": self.spent[k], "projected": projected[k]}
            for k, cap in self.budget.capped().items()
            if projected[k] > cap
        }
        if not crossed:
            return
        receipt = self._write_receipt(step, crossed)
        names = ", ".join(f"{k} {v['projected']:g} > cap {v['cap']:g}" for k, v in crossed.items())
        raise BudgetExceeded(
            f"{self.scope}: the budget stops the job before step {step} ({names}); nothing of "
            f"this job is kept; receipt {receipt}",
            receipt,
        )

    def add(self, cost: Mapping[str, float], infra_failures: int = 0) -> None:
        """Record one step's measured cost (``steps`` counts 1 when not given; ``gpu_hours``
        is the wall time times the job's GPUs when not given)."""
        step = {**zero_cost(), "steps": 1.0, **{k: float(v) for k, v in cost.items()}}
        if "gpu_hours" not in cost:
            step["gpu_hours"] = step["wall_seconds"] * self.gpus / 3600.0
        unknown = sorted(set(step) - set(COST_KEYS))
        if unknown:
            raise ValueError(f"{self.scope}: unknown cost keys {unknown}")
        for key in COST_KEYS:
            self.spent[key] += step[key]
            self.largest_step[key] = max(self.largest_step[key], step[key])
        self.infra_failures += int(infra_failures)

    def ledger(self) -> dict[str, Any]:
        """Budget beside measured spend, and infrastructure failures apart."""
        return {
            "scope": self.scope,
            "budget": dict(self.budget.caps),
            "spent": dict(self.spent),
            "infra_failures": self.infra_failures,
        }

    def _write_receipt(self, step, crossed) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        safe = self.scope.replace("/", "_")
        path = self.receipt_dir / f"{safe}-{stamp}-{os.getpid()}.json"
        n = 1
        while path.exists():  # a receipt is never overwritten
            path = self.receipt_dir / f"{safe}-{stamp}-{os.getpid()}-{n}.json"
            n += 1
        body = {**self.ledger(), "stopped_before_step": step, "crossed": crossed}
        atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
        return path
