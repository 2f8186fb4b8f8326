"""The job harness: what every rule's job does around its library call, done in one place.

A job declares how its inputs record is read from the rule (files, wildcards and params), the
settings record it reads of the configuration (``editcredit.job_settings``: rebuilt strictly from
the rule's ``settings`` param) and the library call that turns both into its result. The harness
owns the rest: the GPU memory the job binds (``declare_gpu_mem_mb``, before anything imports the
policy), the declared log and the attempt's own log (``editcredit.workflow.logged``: a failure
record for a failing attempt), the context every job may need (:class:`JobContext`: GPUs,
threads, the caps of ``budgets`` and the configuration as provenance hashes it), the console line
a job prints after its log closes, and the console message of an expected error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar, cast

from editcredit.workflow import logged

__all__ = ["Job", "JobContext", "rule_files"]

I = TypeVar("I")  # noqa: E741 - the inputs record
S = TypeVar("S")
R = TypeVar("R")


def rule_files(sm: Any) -> Any:
    """The inputs "record" of a job whose library call reads the rule's files, wildcards and
    params itself: the script's ``snakemake`` object as it is."""
    return sm


@dataclass(frozen=True)
class JobContext:
    """What the harness hands every job beside its inputs and settings.

    ``provenance_config`` is the configuration as Snakemake loaded it: result files hash it into
    their provenance block and identity receipts record it (``editcredit.io.provenance``); no
    job reads a value from it. Values a job reads come through its settings record or, for what
    must not rerun a job when it changes (budgets, the storage floor, a prune's k, the models'
    pins), through :attr:`settings`, the typed tree built here from the same configuration.
    """

    rule: str
    gpus: int
    threads: int
    provenance_config: Mapping[str, Any] = field(repr=False)

    @cached_property
    def settings(self) -> Any:
        """The typed tree (``editcredit.settings.Settings``) of the configuration."""
        from editcredit.settings import Settings

        return Settings.from_config(self.provenance_config)

    def models(self) -> dict[str, dict[str, Any]]:
        """The configured models (``models``), whose ``receipt_sha256`` pins each base model
        (``editcredit.audit.base_pin.guard_base``: checked before a job reads a base)."""
        return {name: model.to_dict() for name, model in self.settings.models.items()}

    def budget(self, name: str) -> dict[str, Any]:
        """The caps of ``budgets.<name>`` (``run``, ``evaluation``, ``base_model``)."""
        return getattr(self.settings.budgets, name).to_dict()

    def study_budget(self, study: str) -> dict[str, Any] | None:
        """The caps of ``budgets.studies.<study>`` (None: the study declares none)."""
        caps = self.settings.budgets.studies.get(study)
        return None if caps is None else caps.to_dict()


@dataclass(frozen=True)
class Job(Generic[I, S, R]):
    """One rule's job: ``call(inputs(sm), settings, context)`` run inside the harness.

    ``settings`` is the job's settings record class (built with ``from_mapping`` from the rule's
    ``settings`` param) or None for a job that takes its few values as params. ``gpu`` jobs
    declare the GPU memory their rule reserves before the call. ``console`` turns the result
    into a line printed after the log closes (on the console too); an error of
    ``console_errors`` leaves the job as a one-line message on stderr and exit status 1.
    """

    rule: str
    inputs: Callable[[Any], I]
    call: Callable[[I, S, JobContext], R]
    settings: Any = None
    gpu: bool = False
    console: Callable[[R], str] | None = None
    console_errors: tuple[type[BaseException], ...] = ()

    def context(self, sm: Any) -> JobContext:
        gpus = getattr(sm.resources, "gpu", 0) or 0
        return JobContext(self.rule, int(gpus), int(sm.threads), sm.config)

    def read_settings(self, sm: Any) -> S:
        """The settings record, rebuilt strictly from the rule's ``settings`` param."""
        # S is None exactly when ``settings`` is (a job without a settings record)
        return cast(
            S, None if self.settings is None else self.settings.from_mapping(sm.params.settings)
        )

    def run(self, sm: Any) -> R:
        """Run the job for the script's ``snakemake`` object; return the library's result."""
        if sm.rule != self.rule:
            raise ValueError(f"job {self.rule!r} run for rule {sm.rule!r}")
        if self.gpu:
            from editcredit.policy.devices import declare_gpu_mem_mb

            declare_gpu_mem_mb(sm.resources)  # the GPU memory its job binds
        try:
            with logged(sm.log[0]):
                result = self.call(self.inputs(sm), self.read_settings(sm), self.context(sm))
        except self.console_errors as exc:  # say what to do on the console, not only in the log
            sys.stderr.write(f"rule {self.rule}: {exc}\n")
            raise SystemExit(1) from None
        if self.console is not None:
            print(self.console(result))
        return result
