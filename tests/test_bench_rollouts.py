"""The rollout benchmark's choice of model per checkout: each plays its own base model."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_rollouts import GradingTally, model_dirs, time_limited  # noqa: E402


def checkout_with_model(root: Path, name: str, model: str | None) -> Path:
    checkout = root / name
    checkout.mkdir()
    if model is not None:
        (checkout / "models" / "base" / model).mkdir(parents=True)
        (checkout / "models" / "base" / model / "config.json").write_text("{}")
    return checkout


def args(model="tiny", against=None, against_model=None):
    return SimpleNamespace(model=model, against=against, against_model=against_model)


def test_each_checkout_plays_its_own_base_model(tmp_path):
    ours = checkout_with_model(tmp_path, "ours", "tiny")
    theirs = checkout_with_model(tmp_path, "theirs", "tiny")
    dirs = model_dirs([ours, theirs], args(against=theirs))
    assert dirs == {
        ours: ours / "models" / "base" / "tiny",
        theirs: theirs / "models" / "base" / "tiny",
    }


def test_the_other_checkouts_model_can_be_named(tmp_path):
    ours = checkout_with_model(tmp_path, "ours", "tiny")
    theirs = checkout_with_model(tmp_path, "theirs", None)
    elsewhere = checkout_with_model(tmp_path, "elsewhere", "tiny") / "models" / "base" / "tiny"
    dirs = model_dirs([ours, theirs], args(against=theirs, against_model=elsewhere))
    assert dirs[theirs] == elsewhere.resolve()


@pytest.mark.parametrize("missing", ["ours", "theirs"])
def test_a_missing_base_model_is_one_clear_exit_naming_it(tmp_path, missing):
    ours = checkout_with_model(tmp_path, "ours", None if missing == "ours" else "tiny")
    theirs = checkout_with_model(tmp_path, "theirs", None if missing == "theirs" else "tiny")
    with pytest.raises(SystemExit) as exc:
        model_dirs([ours, theirs], args(against=theirs))
    gone = ours if missing == "ours" else theirs
    assert str(gone / "models" / "base" / "tiny") in str(exc.value)
    assert f"cd {gone} && PYTHONPATH=src snakemake --cores 2 models/base/tiny" in str(exc.value)


@pytest.mark.parametrize(
    ("report", "limited"),
    [
        (SimpleNamespace(timeouts=[], collect_timeout=None, run_status="finished"), False),
        (SimpleNamespace(timeouts=[{"nodeid": "t"}], collect_timeout=None), True),
        (SimpleNamespace(timeouts=[], collect_timeout={"seconds": 10.0}), True),
        (SimpleNamespace(timeouts=[], run_status="timeout"), True),
        (SimpleNamespace(), False),  # an older checkout's report without these fields
    ],
)
def test_a_grading_is_time_limited_when_its_run_collection_or_a_test_hit_a_limit(report, limited):
    assert time_limited(report) is limited


def test_the_tally_counts_every_grading_and_the_time_limited_ones_apart():
    reports = iter(
        [
            SimpleNamespace(timeouts=[], run_status="finished"),
            SimpleNamespace(timeouts=[{"nodeid": "t"}], run_status="finished"),
            SimpleNamespace(timeouts=[], run_status="finished"),
        ]
    )
    tally = GradingTally(lambda task, patch: next(reports))
    returned = [tally("task", "patch") for _ in range(3)]
    summary = tally.summary()
    assert [time_limited(r) for r in returned] == [False, True, False]  # passed through
    assert summary["sandbox_gradings"] == 3
    assert summary["time_limited"]["calls"] == 1
    assert 0 <= summary["time_limited"]["seconds"] <= summary["sandbox_seconds"]
