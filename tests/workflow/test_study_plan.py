"""The study plan (editcredit.study_plan): its pieces, its errors, and its jobs against the DAG
Snakemake builds from the same config, so the plan and the rules can never drift apart."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout import copy_sources
from taskfactory import REPO

from editcredit.config import validate_config
from editcredit.settings import Settings
from editcredit.storage.plan import PlanFacts
from editcredit.study_plan import (
    EvalModel,
    Job,
    PlanError,
    StudyPlan,
    eval_models,
    plan_seeds,
    segment_ends,
)

DAG_JOBS = Path(__file__).with_name("dag_jobs.py")


def deep_update(base: dict, layer: dict) -> dict:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_update(base[key], value)
        else:
            base[key] = value
    return base


_CONFIG = yaml.safe_load(Path(REPO, "config", "config.yaml").read_text())


def plan_of(**layer) -> StudyPlan:
    """The plan of config/config.yaml with ``layer`` merged over it (as --configfile does)."""
    config = deep_update(copy.deepcopy(_CONFIG), layer)
    validate_config(config, Path(REPO, "config", "schema.yaml"))
    return StudyPlan.build(Settings.from_config(config))


# --- the pieces --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "end", "expected"),
    [(4, 8, [4, 8]), (10, 80, [10, 20, 30, 40, 50, 60, 70, 80]), (2, 2, [2]), (3, 3, [3])],
)
def test_segment_ends_run_from_k_to_the_endpoint(k, end, expected):
    assert segment_ends(k, end) == expected


@pytest.mark.parametrize(("k", "end"), [(3, 8), (0, 8), (16, 8)])
def test_an_endpoint_that_is_no_segment_end_names_the_keys(k, end):
    with pytest.raises(PlanError, match=f"endpoint_step {end} is not a multiple of segment_steps"):
        segment_ends(k, end)


@pytest.mark.parametrize(
    ("plan", "seeds"),
    [({"M": [42, 7], "B": [7, 1]}, [1, 7, 42]), ({"O": [3]}, [3]), ({}, [])],
)
def test_plan_seeds_are_every_seed_once_ascending(plan, seeds):
    assert plan_seeds(plan) == seeds


@pytest.mark.parametrize(
    ("diagnostic", "chosen", "names"),
    [
        ((), (), ["base", "M-s1", "B-s1"]),
        ((2,), (), ["base", "M-s1", "M-s1-step2", "B-s1", "B-s1-step2"]),
        ((2,), ("B-s1", "base"), ["B-s1", "base"]),
    ],
)
def test_eval_models_in_plan_order(diagnostic, chosen, names):
    models = eval_models("models/base/t", ["M-s1", "B-s1"], 4, diagnostic, "holdout", 3, chosen)
    assert list(models) == names


def test_eval_model_records():
    models = eval_models("models/base/t", ["M-s1"], 4, (2,), "holdout", 3)
    assert models["base"] == EvalModel("base", "models/base/t", "models/base/t")
    assert models["M-s1"] == EvalModel(
        "M-s1", "runs/M-s1/step_4/model", "runs/M-s1/step_4", "M-s1", 4
    )
    curve = models["M-s1-step2"]
    assert (curve.input, curve.diagnostic, curve.evalsets, curve.samples) == (
        "runs/M-s1/step_2",
        True,
        ("holdout",),
        3,
    )
    assert curve.evaluated_on("holdout") and not curve.evaluated_on("broad")
    assert models["M-s1"].evaluated_on("broad")
    assert curve.plan_record() == {
        "dir": "runs/M-s1/step_2/model",
        "run": "M-s1",
        "step": 2,
        "diagnostic": True,
        "evalsets": ["holdout"],
        "samples": 3,
    }


def test_an_unknown_eval_model_names_the_key_and_the_known_ones():
    with pytest.raises(PlanError, match=r"evaluation.models: unknown \['M-s9'\]; known"):
        eval_models("b", ["M-s1"], 4, (), "holdout", 0, ("M-s9",))


@pytest.mark.parametrize(
    ("rule", "wildcards", "values"),
    [
        ("all", {}, {}),
        ("train_segment", {"step": 4, "run": "M-s1"}, {"run": "M-s1", "step": "4"}),
        ("control_replay", {"seed": 42}, {"seed": "42"}),
    ],
)
def test_a_job_holds_its_wildcards_as_strings(rule, wildcards, values):
    job = Job.of(rule, **wildcards)
    assert job.rule == rule and job.values == values
    assert job == Job.of(rule, **dict(reversed(list(wildcards.items()))))


def test_storage_facts_read_segments_pruning_and_evaluations_off_the_jobs():
    jobs = [
        Job.of("train_segment", run="M-s1", step=2),
        Job.of("train_segment", run="M-s1", step=4),
        Job.of("prune_segment", run="M-s1", step=2),
        Job.of("eval_model", model="base", evalset="holdout"),
        Job.of("eval_model_scores", model="base", evalset="holdout"),
        Job.of("audit_params", run="M-s1", step=2),
    ]
    facts = PlanFacts.from_jobs(jobs)
    assert facts == PlanFacts([("M-s1", 2), ("M-s1", 4)], {("M-s1", 2)}, [("base", "holdout")])


# --- the plan of a config ----------------------------------------------------------------------


def test_a_plan_works_out_each_piece_on_first_use():
    """A workflow of a few rule files meets only the errors of the pieces it asks."""
    config = copy.deepcopy(_CONFIG)
    config["training"]["plan"] = {"M": [1], "O": [1]}
    validate_config(config, Path(REPO, "config", "schema.yaml"))
    plan = StudyPlan(Settings.from_config(config))
    assert plan.audit_results == [
        f"results/audits/{r}-s1/step_{n}.json" for r in "MO" for n in (4, 8)
    ]
    with pytest.raises(PlanError, match="stats.comparisons.M-B: arm 'B' is not in training.plan"):
        _ = plan.comparisons


def test_the_default_plan():
    plan = plan_of()
    assert plan.run_names == [
        "O-s42",
        "O-s314159",
        "B-s42",
        "B-s314159",
        "M-s42",
        "M-s314159",
        "E-s42",
    ]
    assert plan.segment_ends == (4, 8) and plan.diagnostic_steps == (4,) and plan.pruned_steps == ()
    assert plan.seeds == [42, 314159]
    assert plan.compared_models == ["base", *plan.run_names]
    assert (
        plan.stop.enabled
        and plan.stop.study == "stop"
        and plan.stop.models == ("base", *plan.run_names)
    )
    rules = [j.rule for j in plan.jobs]
    assert rules.count("train_segment") == 14 and rules.count("eval_model") == len(plan.eval_jobs)
    assert rules[-1] == "all" and "probe" not in rules


@pytest.mark.parametrize(
    ("layer", "rule", "count"),
    [
        ({"training": {"keep_checkpoints": 1}}, "prune_segment", 0),  # step 4 is diagnostic
        (
            {
                "training": {"keep_checkpoints": 2, "endpoint_step": 12},
                "evaluation": {"diagnostic_every": 0},
            },
            "prune_segment",
            7,
        ),
        ({"stop": {"enabled": False}}, "stop_checkpoints", 0),
        ({"stop": {"models": ["base", "M-s42"]}}, "stop_checkpoints", 2),
        ({"evaluation": {"diagnostic_every": 0}}, "eval_model", 16),
    ],
)
def test_jobs_follow_the_settings(layer, rule, count):
    assert [j.rule for j in plan_of(**layer).jobs].count(rule) == count


def test_the_cost_table_leaves_out_the_tables_and_what_follows():
    costed = {j.rule for j in plan_of().costed_jobs}
    assert {"train_segment", "eval_model", "stop_eval", "replay", "freeze_suite"} <= costed
    assert not costed & {"render_tables", "figures", "paper", "all", "stop_report"}


def test_gpus_by_rule_and_per_job():
    plan = plan_of(training={"gpu": 2}, evaluation={"gpu": 1})
    gpus = plan.gpus_by_rule()
    assert gpus["train_segment"] == gpus["control_replay"] == 2 and gpus["eval_model"] == 1
    assert plan.gpus("training_pool") == 2 and plan.gpus("eval_model") == 1
    assert plan.gpus("audit_params") == 0
    model = plan.settings.training.model
    assert plan.gpus("base_model", model) == plan.settings.models[model].gpu


@pytest.mark.parametrize(
    ("layer", "message"),
    [
        ({"training": {"endpoint_step": 10}}, "endpoint_step 10 is not a multiple"),
        ({"evaluation": {"models": ["nope"]}}, "evaluation.models: unknown"),
        ({"evaluation": {"diagnostic_steps": [8]}}, "evaluation.diagnostic_steps: 8"),
        (
            {"stats": {"comparisons": {"M-B": {"a": "M", "b": "B", "seeds": [7]}}}},
            r"stats.comparisons.M-B: seed\(s\) \[7\] not trained",
        ),
        ({"agent": {"environment": "bash"}}, "agent.environment is 'bash'"),
        ({"stop": {"evalsets": ["nope"]}}, r"stop.evalsets: \['nope'\]"),
    ],
)
def test_a_config_that_describes_no_study_fails_when_the_plan_is_built(layer, message):
    with pytest.raises(PlanError, match=message):
        plan_of(**layer)


def test_the_truth_control_runs_only_where_a_layer_plans_it():
    """training.controls (none by default) adds the control's runs, trained, evaluated and
    analysed like an arm's; the multibug-study preset plans T at the arms' seeds."""
    default = plan_of()
    assert not any(r.arm == "T" for r in default.runs)
    assert "T" not in default.trained and default.settings.training.controls is None
    layers = [
        yaml.safe_load(Path(REPO, "config", "presets", name).read_text())
        for name in ("multibug-suite.yaml", "multibug-study.yaml")
    ]
    config = copy.deepcopy(_CONFIG)
    for layer in layers:
        deep_update(config, layer)
    validate_config(config, Path(REPO, "config", "schema.yaml"))
    plan = StudyPlan.build(Settings.from_config(config))
    assert plan.settings.agent.try_scope == "function"
    assert plan.settings.training.suite == "multibugs"
    assert {e.suite for e in plan.settings.evaluation.evalsets.values()} == {"multibugs"}
    t_runs = [r.name for r in plan.runs if r.arm == "T"]
    assert t_runs == ["T-s42", "T-s314159"]
    assert plan.run_names[: len(default.run_names)] == default.run_names
    assert set(t_runs) <= set(plan.eval_models)
    jobs = list(plan.jobs)
    for run in t_runs:
        assert Job.of("train_segment", run=run, step=plan.segment_ends[-1]) in jobs
    assert Job.of("training_analysis", arm="T") in jobs
    assert list(plan.arm_control_replays("T")) == t_runs


# --- the plan against Snakemake's DAG ----------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    names = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")
    return copy_sources(names, tmp_path_factory.mktemp("workflow"))


LAYER = {
    "training": {"endpoint_step": 12, "keep_checkpoints": 2},
    "evaluation": {"diagnostic_every": 0},
    "stop": {"enabled": False},
}


@pytest.mark.parametrize(
    "configfiles",
    [
        [],
        ["config/presets/full-study.yaml"],
        ["layer.yaml"],
        ["config/presets/multibug-suite.yaml", "config/presets/multibug-study.yaml"],
    ],
    ids=["default", "full-study", "pruned-no-stop", "multibug-study"],
)
def test_the_plans_jobs_are_the_dags_jobs(workdir, configfiles):
    (workdir / "layer.yaml").write_text(yaml.safe_dump(LAYER))
    args = ["-n", "--forceall", "--cores", "1"]
    if configfiles:
        args += ["--configfile", *configfiles]
    proc = subprocess.run(
        [sys.executable, str(DAG_JOBS), *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("DAG_JOBS ")]
    jobs = json.loads(line.removeprefix("DAG_JOBS "))
    assert jobs["dag"], "no jobs planned"
    assert jobs["plan"] == jobs["dag"]
