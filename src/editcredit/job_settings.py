"""What each job reads of the configuration: one frozen record per job, built from SETTINGS.

A rule passes its job's record as one param (``settings=JOB.to_dict()``, built in
``rules/common.smk`` from the typed tree :class:`editcredit.settings.Settings`), and its script
rebuilds it strictly (``EvalModelSettings.from_mapping(snakemake.params.settings)``). A record
holds only the keys its job uses, so Snakemake's params trigger reruns a job when one of those
changes and never because an unrelated key of the same section did (``evaluation.models`` does
not rerun an eval_model job; ``training.plan`` does not rerun a segment). Whole sections appear
where the job reads all of them (the agent's settings are hashed into the evaluation journal's
identity; the sandbox's go to the sandbox pool).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from editcredit.config import Section
from editcredit.settings import (
    AgentSettings,
    BudgetCaps,
    FaultSettings,
    GeneratorSettings,
    GradingSettings,
    HealthSettings,
    PoolScreenSettings,
    ProbeSettings,
    RaySettings,
    RetryLimits,
    RewardSettings,
    SandboxSettings,
    Settings,
)

R = TypeVar("R", bound="JobRecord")


@dataclass(frozen=True)
class JobRecord(Section):
    """Base of a job's record: :meth:`from_settings` takes each field from the typed tree by its
    name, as a key of the record's ``SECTION`` (``training``: ``segment_steps``, ``ray``) or else
    as a whole top-level section (``agent``, ``grading``). A field that is itself a job record is
    built from the tree the same way; a mapping is copied."""

    #: The section of :class:`Settings` whose keys the fields may name (None: top level only).
    SECTION: ClassVar[str | None] = None

    @classmethod
    def from_settings(cls: type[R], settings: Settings) -> R:
        sources = [settings] if cls.SECTION is None else [getattr(settings, cls.SECTION), settings]
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            if isinstance(hint, type) and issubclass(hint, JobRecord):
                values[field.name] = hint.from_settings(settings)
                continue
            found = [s for s in sources if field.name in {f.name for f in dataclasses.fields(s)}]
            if len(found) != 1:
                raise TypeError(
                    f"{cls.__name__}.{field.name}: {len(found)} places in the settings tree "
                    f"(section {cls.SECTION!r}, top level) have that name; exactly one must"
                )
            value = getattr(found[0], field.name)
            values[field.name] = dict(value) if isinstance(value, dict) else value
        return cls(**values)


@dataclass(frozen=True)
class EvalRunSettings(JobRecord):
    """``evaluation`` keys one eval_model job reads (the plan carries models and eval sets)."""

    SECTION = "evaluation"

    seed: int
    batch_size: int
    limits: RetryLimits
    faults: FaultSettings
    on_grader_change: str


@dataclass(frozen=True)
class EvalModelSettings(JobRecord):
    """``eval_model``: what one model x eval set evaluation reads (METHOD §8)."""

    evaluation: EvalRunSettings
    agent: AgentSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings


@dataclass(frozen=True)
class SegmentSettings(JobRecord):
    """``train_segment``: what one segment of a GRPO run reads (``training`` keys flattened:
    the segment length, the GRPO settings, health, Ray, the pool size, the quarantine)."""

    SECTION = "training"

    segment_steps: int
    grpo: dict[str, Any]
    health: HealthSettings
    ray: RaySettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings
    pool_size: int
    quarantine: dict[str, str] | None = None


@dataclass(frozen=True)
class PoolJobSettings(JobRecord):
    """``training_pool``: the pool's size, its screen by the base policy and what the screen's
    episodes read (rl.pool)."""

    SECTION = "training"

    pool_size: int
    pool_screen: PoolScreenSettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings
    quarantine: dict[str, str] | None = None


@dataclass(frozen=True)
class ControlReplaySettings(JobRecord):
    """``control_replay``: what the base policy's replay of a seed's draws reads."""

    SECTION = "training"

    endpoint_step: int
    grpo: dict[str, Any]
    ray: RaySettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings
    pool_size: int
    quarantine: dict[str, str] | None = None


@dataclass(frozen=True)
class ProbeJobSettings(JobRecord):
    """``probe``: what the base-policy probe reads (its rollouts are graded: METHOD §3's
    utility weights come from ``grading``)."""

    probe: ProbeSettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings


@dataclass(frozen=True)
class TablesSettings(Section):
    """``render_tables``: the main comparison, row orders, GPUs per rule and the run budget.

    ``arm_order``, ``run_order`` and ``gpus_by_rule`` are derived in ``rules/common.smk``
    (plan order, ``rule_gpus``); ``budget`` is ``budgets.run``."""

    main: str
    arm_order: list[str]
    run_order: list[str]
    gpus_by_rule: dict[str, int]
    budget: BudgetCaps
