"""One job per rule: ``editcredit.jobs.<rule>`` holds the job of the rule of that name.

Every script under ``scripts/`` is the same two lines, ``from editcredit.jobs import run_rule``
and ``run_rule(snakemake)``: :func:`run_rule` imports the module named after the rule that runs
(``snakemake.rule``) and runs its ``JOB`` (an :class:`editcredit.jobs.harness.Job`) in the
harness, which owns what every job does around its library call (the log, the GPU binding, the
settings record, the console line).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["job_of", "run_rule"]


def job_of(rule: str) -> Any:
    """The :class:`~editcredit.jobs.harness.Job` of ``rule`` (module ``editcredit.jobs.<rule>``)."""
    return importlib.import_module(f"{__name__}.{rule}").JOB


def run_rule(sm: Any) -> Any:
    """Run the job of the rule Snakemake is running (``sm``: the script's ``snakemake``)."""
    return job_of(sm.rule).run(sm)
