"""The training configuration of one GRPO run (METHOD §3-§5), validated on construction.

A run's config is ``training.grpo`` (:class:`editcredit.settings.GrpoSettings`: each key's type
there, its meaning and bounds in config/schema.yaml, its value in config/config.yaml; never in
code) with the agent's sampling temperature, the run's arm and its seed. :func:`run_config` is
the one place that puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from editcredit.config import schema_of
from editcredit.records import ARM_NAMES, CONTROL_ARM_NAMES
from editcredit.settings import RUN_FIELDS, GrpoSettings, check_run_fields

LOSS_AGGREGATION_NAMES = tuple(schema_of("training.grpo.loss_aggregation")["enum"])
ARMS = ARM_NAMES  # the arms of editcredit.records, defined there once
#: What a run may train: the arms and the credit controls (METHOD §3; a control runs only where a
#: config layer plans it, training.controls)
TRAINABLE = (*ARMS, *CONTROL_ARM_NAMES)


@dataclass(frozen=True)
class TrainConfig(GrpoSettings):
    """Settings of one training run: the fields of ``training.grpo`` (optimiser, GRPO, policy
    loss and credit; :class:`~editcredit.settings.GrpoSettings`) and the run's own below.

    Every field is required; a value outside the bounds config/schema.yaml declares for its key
    raises ValueError naming the field.
    """

    temperature: float
    """Sampling temperature of the rollouts (``agent.temperature``); the update's log-probs use
    the same one."""
    arm: str
    """Credit arm: O (none), B (broadcast), M (block), E (advantage-on-block), or the control T
    (the known truth per block)."""
    seed: int
    """Training seed (task order, sampling seeds)."""

    def __post_init__(self) -> None:
        from editcredit.rl.losses import POLICY_LOSSES  # lazy: keeps torch out of config import

        check_run_fields({f.name: getattr(self, f.name) for f in fields(self)})
        _check_choice("arm", self.arm, TRAINABLE)
        _check_choice("policy_loss", self.policy_loss, tuple(sorted(POLICY_LOSSES)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrainConfig:
        """Build from a mapping; unknown keys and invalid values raise ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"TrainConfig: unknown key(s): {', '.join(unknown)}")
        missing = sorted(known - set(d))
        if missing:
            raise ValueError(f"TrainConfig: missing key(s): {', '.join(missing)}")
        return cls(**d)


def run_config(
    grpo: GrpoSettings | Mapping[str, Any], temperature: float, arm: str, seed: int
) -> TrainConfig:
    """The config of one run: ``training.grpo`` with the agent's temperature, the arm and the
    seed (the one builder of :class:`TrainConfig`)."""
    run = dict(zip(RUN_FIELDS, (temperature, arm, seed), strict=True))
    return TrainConfig.from_dict({**grpo, **run})


def _check(name: str, ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"TrainConfig.{name}: {what}")


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    _check(name, value in choices, f"{value!r} is not one of {', '.join(choices)}")
