"""The attempts journal: an append-only JSONL file written as attempts happen.

One journal per identity (the plan slice, the model's content hash, the settings that change
what an attempt means: agent budgets, grading weights, sandbox, retry limits, seed). Its
directory is ``attempts/{key}/`` beside the slot files; Snakemake does not own it, so an
interrupted job leaves it in place and the next run resumes from it. Each line is flushed and
fsynced before the attempt counts; a line torn by a crash is skipped (that attempt did not
complete) and never overwritten.

The identity names the grader (``grader``: :mod:`editcredit.grading.grader_identity`), so a
changed grader (a rebuilt image, changed grading or observer code, another pytest) never
appends to the journal of another: :func:`open_journal` either starts a new journal beside the
old one (kept) or refuses (``evaluation.on_grader_change``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypedDict

from editcredit.data.task import canonical_json
from editcredit.evaluation.slots import Attempt
from editcredit.grading.grader_identity import grader_changes
from editcredit.io.hashing import sha256_text

JOURNAL_NAME = "journal.jsonl"
GRADER_KEY = "grader"
#: the choices of ``evaluation.on_grader_change``
ON_GRADER_CHANGE = ("new_journal", "refuse")


class JournalHeader(TypedDict):
    """A journal's first line: the identity it was started with, and that identity's key."""

    # the identity, open here: the journal keeps whatever mapping its writer names it by
    # (evaluation.job.journal_identity: the plan slice, the model's hash, the settings' sections
    # as configured, the seed, the grader's identity), and compares it whole
    header: dict[str, Any]
    key: str  # journal_key(header): the sha256 of its canonical JSON


class JournalLine(TypedDict):
    """Every later line: one attempt (:class:`~editcredit.evaluation.slots.Attempt`'s JSON)."""

    attempt: dict[str, Any]


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
            head: JournalHeader = {"header": self.identity, "key": self.key}
            self._write_lines([json.dumps(head)])
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
        lines: list[JournalLine] = [{"attempt": a.model_dump(mode="json")} for a in attempts]
        self._write_lines(json.dumps(line) for line in lines)

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


def journal_dir(root: str | Path, identity: Mapping[str, Any]) -> Path:
    """The directory of the journal of ``identity`` under ``root`` (``attempts/``)."""
    return Path(root) / journal_key(identity)[:16]


def read_header(path: Path) -> dict[str, Any] | None:
    """The identity a journal was started with; None where its header line is torn."""
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
    try:
        return dict(json.loads(first)["header"])
    except (ValueError, KeyError, TypeError):
        return None


def other_grader_journals(
    root: str | Path, identity: Mapping[str, Any]
) -> list[tuple[Path, list[str]]]:
    """Journals under ``root`` of the same identity but for the grader, with what differs."""
    rest = {k: v for k, v in identity.items() if k != GRADER_KEY}
    found = []
    for path in sorted(Path(root).glob(f"*/{JOURNAL_NAME}")):
        header = read_header(path)
        if header is None or header.get(GRADER_KEY) == identity.get(GRADER_KEY):
            continue
        if {k: v for k, v in header.items() if k != GRADER_KEY} == rest:
            found.append((path, grader_changes(header.get(GRADER_KEY), identity[GRADER_KEY])))
    return found


def open_journal(
    root: str | Path,
    identity: Mapping[str, Any],
    on_grader_change: str,
    log=print,
) -> Journal:
    """The journal of ``identity`` under ``root``, resumed or new.

    Where a journal of the same identity under another grader exists and this grader has none
    yet, ``new_journal`` starts this grader's own journal (the other stays as it is, never
    resumed) and ``refuse`` raises :class:`JournalError` naming that journal and what differs.
    A journal of this very grader is resumed under either choice: it mixes nothing.
    """
    if on_grader_change not in ON_GRADER_CHANGE:
        raise ValueError(
            f"evaluation.on_grader_change: {on_grader_change!r} is not one of "
            f"{', '.join(ON_GRADER_CHANGE)}"
        )
    if GRADER_KEY not in identity:
        raise JournalError(f"{root}: a journal identity must name its grader ({GRADER_KEY!r})")
    directory = journal_dir(root, identity)
    own = (directory / JOURNAL_NAME).exists()
    for path, changes in other_grader_journals(root, identity):
        if on_grader_change == "refuse" and not own:
            raise JournalError(
                f"{path}: this slice was recorded under another grader ({'; '.join(changes)}); "
                "evaluation.on_grader_change is 'refuse' (set 'new_journal' to start a new "
                "journal beside it, or grade with the grader it names)"
            )
        log(f"{path}: recorded under another grader ({'; '.join(changes)}); kept, not resumed")
    return Journal(directory, identity)
