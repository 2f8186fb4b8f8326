"""Each job's settings record (editcredit.job_settings): built from the typed tree, only what the
job reads (a rule's params, so an unrelated key never reruns it), rebuilt strictly by the
script; and the utility weights have no default anywhere in code."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

import pytest
from jobfactory import job_config, job_settings

from editcredit.config import ConfigError
from editcredit.job_settings import (
    ControlReplaySettings,
    EvalModelSettings,
    JobRecord,
    ProbeJobSettings,
    SegmentSettings,
)

RECORDS = [EvalModelSettings, SegmentSettings, ControlReplaySettings, ProbeJobSettings]

#: Keys no one of these jobs reads: changing them must leave every record (its params) as it is.
UNRELATED = {
    "training.plan": {"O": [1], "M": [1, 2]},
    "training.gpu": 3,
    "training.keep_checkpoints": 5,
    "training.suite": "elsewhere",
    "evaluation.models": ["base"],
    "evaluation.gpu": 2,
    "stats.main": "M-O",
    "paper.latexmk": "/opt/latexmk",
    "audit.chunk_mib": 7,
}


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("key", sorted(UNRELATED))
def test_an_unrelated_key_leaves_the_params_of_a_job_unchanged(record, key):
    assert job_settings(record, {key: UNRELATED[key]}).to_dict() == job_settings(record).to_dict()


@pytest.mark.parametrize(
    ("record", "key", "value"),
    [
        (EvalModelSettings, "evaluation.seed", 5),
        (EvalModelSettings, "evaluation.on_grader_change", "refuse"),
        (EvalModelSettings, "grading.f_weight", 0.5),
        (SegmentSettings, "training.segment_steps", 7),
        (SegmentSettings, "training.grpo.lr", 0.5),
        (SegmentSettings, "grading.g_weight", 0.5),
        (ControlReplaySettings, "training.endpoint_step", 12),
        (ControlReplaySettings, "agent.temperature", 0.5),
        (ProbeJobSettings, "probe.seed", 9),
        (ProbeJobSettings, "grading.f_weight", 0.5),
    ],
)
def test_a_key_the_job_reads_changes_its_params(record, key, value):
    assert job_settings(record, {key: value}).to_dict() != job_settings(record).to_dict()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_the_script_rebuilds_the_record_the_rule_passed(record):
    built = job_settings(record, {"training.quarantine": {"t1": "why"}})
    assert record.from_mapping(built.to_dict()) == built


def test_the_eval_record_carries_the_sections_the_journal_identity_hashes_unchanged():
    """An evaluation journal recorded before the record existed keeps its identity."""
    config = job_config()
    settings = job_settings(EvalModelSettings)
    assert settings.agent.to_dict() == config["agent"]
    assert settings.grading.to_dict() == config["grading"]
    assert settings.sandbox.to_dict() == config["sandbox"]
    assert settings.generation.to_dict() == config["generation"]
    assert settings.evaluation.limits.to_dict() == config["evaluation"]["limits"]


def test_the_segment_record_gives_the_workers_the_sections_as_configured():
    config = job_config()
    settings = job_settings(SegmentSettings)
    assert settings.reward.to_dict() == config["reward"]
    assert settings.ray.to_dict() == config["training"]["ray"]
    assert settings.health.to_dict() == config["training"]["health"]
    assert settings.grpo == config["training"]["grpo"]


@dataclass(frozen=True)
class _TwoHomes(JobRecord):
    """``two_homes``: ``models`` is a key of ``evaluation`` and a top-level section too."""

    SECTION = "evaluation"

    models: list[str]


@dataclass(frozen=True)
class _NoHome(JobRecord):
    """``no_home``: no section of the tree has a ``segment_steps`` at the top level."""

    segment_steps: int


@pytest.mark.parametrize(
    ("record", "match"),
    [(_TwoHomes, "_TwoHomes.models: 2 places"), (_NoHome, "_NoHome.segment_steps: 0 places")],
)
def test_a_record_field_must_name_exactly_one_place_in_the_tree(record, match):
    with pytest.raises(TypeError, match=match):
        job_settings(record)


def test_a_bad_param_is_refused_naming_its_key():
    params = job_settings(SegmentSettings).to_dict()
    params["grading"]["f_wieght"] = 0.1
    with pytest.raises(ConfigError, match="train_segment.grading.f_wieght: unknown key"):
        SegmentSettings.from_mapping(params)
    del params["grading"]["f_wieght"]
    del params["health"]
    with pytest.raises(ConfigError, match="train_segment.health: missing"):
        SegmentSettings.from_mapping(params)


def _weight_defaults(fn) -> dict:
    params = inspect.signature(fn).parameters
    return {
        name: p.default
        for name, p in params.items()
        if name in ("f_weight", "g_weight", "grading_cfg") and p.default is not p.empty
    }


def test_the_utility_weights_have_no_default_in_code():
    from editcredit.agent.probe import rollout_and_grade, rollout_grade_and_query
    from editcredit.evaluation.attempts import grade_attempt
    from editcredit.evaluation.runner import SliceSettings
    from editcredit.grading.controls import run_controls
    from editcredit.grading.grader import grade_patch, grade_tree, judge_run
    from editcredit.grading.utility import training_score, utility

    functions = [
        rollout_and_grade,
        rollout_grade_and_query,
        grade_attempt,
        run_controls,
        grade_patch,
        grade_tree,
        judge_run,
        training_score,
        utility,
    ]
    for fn in functions:
        params = inspect.signature(fn).parameters
        assert {"f_weight", "g_weight"} <= set(params) or "grading_cfg" in params, fn.__name__
        assert _weight_defaults(fn) == {}, fn.__name__
    fields = {f.name: f for f in dataclasses.fields(SliceSettings)}
    for name in ("f_weight", "g_weight"):
        assert fields[name].default is dataclasses.MISSING
