"""The set-up every job that plays or grades a model does before its work, done in one place.

A job that reads a model and grades its patches (train_segment, control_replay, eval_model)
first checks a base against its identity receipt and the pin of ``models`` (before anything
reads it), then reads the gold times the control rule recorded for the suite (a missing
directory fails before any work), and names its grader (:func:`grader_identity`, read when the
job starts). The base check's directory hash is an input hash its provenance block takes as it
is (:meth:`GradedSetup.known_inputs`); the gold-times directory is never a provenance input
(its seconds are the clock's). ``rl.train_job.rollout_setup`` adds the training pool and the
rollout workers' settings on top; ``evaluation.job.eval_model_job`` its plan slice and
sandbox pool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from editcredit.audit.base_pin import guard_base
from editcredit.grading.grader_identity import grader_identity
from editcredit.sandbox.limits import GoldTimesBook, gold_times_book


@dataclass(frozen=True)
class GradedSetup:
    """A graded job's checked model and recorded gold times."""

    model_dir: str
    base_check: dict[str, Any] | None  # None: not a base (a segment's checkpoint)
    gold_times: GoldTimesBook

    def known_inputs(self) -> dict[str, str]:
        """The input hashes the base check already computed (for the provenance block)."""
        if self.base_check is None:
            return {}
        return {self.model_dir: self.base_check["directory_sha256"]}

    @staticmethod
    def grader(sandbox: Mapping[str, Any]) -> dict[str, Any]:
        """The identity of the grader the job's ``sandbox`` section makes (image, code and
        versions), read when the job starts."""
        return grader_identity(sandbox)


def graded_setup(
    model_dir: str,
    models: Mapping[str, Mapping[str, Any]] | None,
    gold_times: str | None,
    *,
    check_base: bool = True,
) -> GradedSetup:
    """A base (``check_base``) checked against its receipt and the pin of ``models`` before
    anything reads it; then the gold times of ``gold_times`` (``results/controls/{suite}/tasks``;
    None: an empty book, every task measured)."""
    base_check = guard_base(model_dir, models) if check_base else None
    return GradedSetup(model_dir, base_check, gold_times_book(gold_times))
