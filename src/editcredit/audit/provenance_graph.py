"""The dependency graph that provenance blocks describe, and what a change reaches.

A node is a path (relative to the repository root when inside it). A result depends on each
input its block lists; a directory input covers every file below it, so a change to
``runs/M-s42/step_4/model/model.safetensors`` reaches the results that list
``runs/M-s42/step_4/model`` or ``runs/M-s42/step_4``, and a change to a directory reaches the
results that list a file inside it.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable
from pathlib import PurePosixPath

__all__ = ["ProvenanceGraph", "chain", "is_table"]

TABLE_DIR = "paper/tables/"


def is_table(node: str) -> bool:
    return node.startswith(TABLE_DIR) and node.endswith(".tex")


class ProvenanceGraph:
    """Edges input -> result, with directory containment resolved at query time."""

    def __init__(self) -> None:
        self.consumers: dict[str, set[str]] = {}
        self.results: set[str] = set()
        self._sorted: list[str] | None = None

    def add(self, result: str, inputs: Iterable[str]) -> None:
        self.results.add(result)
        for node in inputs:
            self.consumers.setdefault(node, set()).add(result)
        self._sorted = None

    def dependents(self, node: str) -> set[str]:
        """Results whose inputs are ``node``, a directory above it or a path below it."""
        out: set[str] = set()
        path = PurePosixPath(node)
        for anc in (path, *path.parents):
            out |= self.consumers.get(anc.as_posix(), set())
        if self._sorted is None:
            self._sorted = sorted(self.consumers)
        prefix = node.rstrip("/") + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        while i < len(self._sorted) and self._sorted[i].startswith(prefix):
            out |= self.consumers[self._sorted[i]]
            i += 1
        out.discard(node)
        return out

    def downstream(self, start: str) -> dict[str, tuple[str, int]]:
        """Results reached from ``start``: ``{result: (parent on a shortest chain, depth)}``."""
        seen: dict[str, tuple[str, int]] = {}
        queue = deque([(start, 0)])
        while queue:
            node, depth = queue.popleft()
            for nxt in sorted(self.dependents(node)):
                if nxt not in seen and nxt != start:
                    seen[nxt] = (node, depth + 1)
                    queue.append((nxt, depth + 1))
        return seen


def chain(reached: dict[str, tuple[str, int]], node: str) -> list[str]:
    """The shortest chain ``[node, parent, ..., start]`` recorded by ``downstream``."""
    out = [node]
    while node in reached:
        node = reached[node][0]
        out.append(node)
    return out
