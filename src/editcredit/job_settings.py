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

from dataclasses import dataclass
from typing import Any

from editcredit.config import Section
from editcredit.settings import (
    AgentSettings,
    BudgetCaps,
    FaultSettings,
    GeneratorSettings,
    GradingSettings,
    HealthSettings,
    ProbeSettings,
    RaySettings,
    RetryLimits,
    RewardSettings,
    SandboxSettings,
    Settings,
)


@dataclass(frozen=True)
class EvalRunSettings(Section):
    """``evaluation`` keys one eval_model job reads (the plan carries models and eval sets)."""

    seed: int
    batch_size: int
    limits: RetryLimits
    faults: FaultSettings
    on_grader_change: str


@dataclass(frozen=True)
class EvalModelSettings(Section):
    """``eval_model``: what one model x eval set evaluation reads (METHOD §8)."""

    evaluation: EvalRunSettings
    agent: AgentSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings

    @classmethod
    def from_settings(cls, settings: Settings) -> EvalModelSettings:
        ev = settings.evaluation
        return cls(
            evaluation=EvalRunSettings(
                seed=ev.seed,
                batch_size=ev.batch_size,
                limits=ev.limits,
                faults=ev.faults,
                on_grader_change=ev.on_grader_change,
            ),
            agent=settings.agent,
            grading=settings.grading,
            sandbox=settings.sandbox,
            generation=settings.generation,
        )


@dataclass(frozen=True)
class SegmentSettings(Section):
    """``train_segment``: what one segment of a GRPO run reads (``training`` keys flattened:
    the segment length, the GRPO settings, health, Ray, the quarantine)."""

    segment_steps: int
    grpo: dict[str, Any]
    health: HealthSettings
    ray: RaySettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings
    quarantine: dict[str, str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> SegmentSettings:
        tr = settings.training
        return cls(
            segment_steps=tr.segment_steps,
            grpo=dict(tr.grpo),
            health=tr.health,
            ray=tr.ray,
            agent=settings.agent,
            reward=settings.reward,
            grading=settings.grading,
            sandbox=settings.sandbox,
            generation=settings.generation,
            quarantine=tr.quarantine,
        )


@dataclass(frozen=True)
class ControlReplaySettings(Section):
    """``control_replay``: what the base policy's replay of a seed's draws reads."""

    endpoint_step: int
    grpo: dict[str, Any]
    ray: RaySettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings
    quarantine: dict[str, str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> ControlReplaySettings:
        tr = settings.training
        return cls(
            endpoint_step=tr.endpoint_step,
            grpo=dict(tr.grpo),
            ray=tr.ray,
            agent=settings.agent,
            reward=settings.reward,
            grading=settings.grading,
            sandbox=settings.sandbox,
            generation=settings.generation,
            quarantine=tr.quarantine,
        )


@dataclass(frozen=True)
class ProbeJobSettings(Section):
    """``probe``: what the base-policy probe reads (its rollouts are graded: METHOD §3's
    utility weights come from ``grading``)."""

    probe: ProbeSettings
    agent: AgentSettings
    reward: RewardSettings
    grading: GradingSettings
    sandbox: SandboxSettings
    generation: GeneratorSettings

    @classmethod
    def from_settings(cls, settings: Settings) -> ProbeJobSettings:
        return cls(
            probe=settings.probe,
            agent=settings.agent,
            reward=settings.reward,
            grading=settings.grading,
            sandbox=settings.sandbox,
            generation=settings.generation,
        )


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
