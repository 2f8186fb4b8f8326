"""The attempts journal: an append-only JSONL file written as attempts happen.

One journal per identity (the plan slice, the model's content hash, the settings that change
what an attempt means: agent budgets, grading weights, sandbox, retry limits, seed). Its
directory is ``attempts/{key}/`` beside the slot files; Snakemake does not own it, so an
interrupted job leaves it in place and the next run resumes from it. Each line is flushed and
fsynced before the attempt counts; a line torn by a crash is skipped (that attempt did not
complete) and never overwritten.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from editcredit.audit.hashing import sha256_text
from editcredit.data.task import canonical_json
from editcredit.evaluation.slots import Attempt

JOURNAL_NAME = "journal.jsonl"


class JournalError(ValueError):
    """The journal does not belong to this identity, or holds an impossible sequence."""


def journal_key(identity: Mapping[str, Any]) -> str:
    return sha256_text(canonical_json(dict(identity)))


class Journal:
    """Append attempts, replay them by slot. Thread-safe appends."""

    def __init__(self, directory: str | Path, identity: Mapping[str, Any]) -> None:
        self.identity = dict(identity)
        self.key = journal_key(identity)
        self.dir = Path(directory)
        self.path = self.dir / JOURNAL_NAME
        self.torn_lines = 0
        self._lock = threading.Lock()
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or self.path.stat().st_size == 0:
            self._write_lines([json.dumps({"header": self.identity, "key": self.key})])
        else:
            self._repair_tail()
            first = self.path.open(encoding="utf-8").readline()
            header = json.loads(first)
            if header.get("key") != self.key:
                raise JournalError(
                    f"{self.path}: belongs to key {header.get('key')}, not {self.key}"
                )

    def _repair_tail(self) -> None:
        """A crash mid-line leaves no newline at the end: end that line so appends stay lines."""
        with self.path.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            last = fh.read(1)
        if last != b"\n":
            with self.path.open("ab") as fh:
                fh.write(b"\n")
                fh.flush()
                os.fsync(fh.fileno())

    def _write_lines(self, lines: Iterable[str]) -> None:
        text = "".join(line + "\n" for line in lines)
        if not text:
            return
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, attempts: Iterable[Attempt]) -> None:
        """Record attempts (one line each, durable before this returns)."""
        self._write_lines(json.dumps({"attempt": a.model_dump(mode="json")}) for a in attempts)

    def replay(self) -> dict[tuple[str, int], list[Attempt]]:
        """Every recorded attempt by slot, in order; indices must run 0, 1, 2, ... per slot."""
        by_slot: dict[tuple[str, int], list[Attempt]] = {}
        self.torn_lines = 0
        with self.path.open(encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.torn_lines += 1
                continue
            attempt = Attempt.model_validate(record["attempt"])
            history = by_slot.setdefault(attempt.slot, [])
            if attempt.index != len(history):
                raise JournalError(
                    f"{self.path}: line {number}: attempt {attempt.index} of slot "
                    f"{attempt.slot} follows {len(history)} attempts"
                )
            history.append(attempt)
        return by_slot
