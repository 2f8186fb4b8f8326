"""Figures: written as PDF and PNG, deterministic bytes, unresolved comparisons say so."""

from __future__ import annotations

import json

import pytest
from fake_results import FIGURES

from editcredit.report import figures


def test_figures_are_written(resolved_tree, unresolved_tree):
    for tree in (resolved_tree, unresolved_tree):
        for name in FIGURES:
            for ext in ("pdf", "png"):
                path = tree["root"] / "paper" / "figures" / f"{name}.{ext}"
                assert path.stat().st_size > 5_000, path


def test_figures_are_deterministic(resolved_tree, tmp_path):
    root = resolved_tree["root"]
    rec = json.loads((root / "results" / "stats" / "paired" / "M-B.json").read_text())
    a = figures.bootstrap_figure(rec, tmp_path / "a")
    b = figures.bootstrap_figure(rec, tmp_path / "b")
    for pa, pb in zip(a, b, strict=True):
        assert pa.read_bytes() == pb.read_bytes()


def test_histogram_reproduces_the_ci(resolved_tree):
    root = resolved_tree["root"]
    rec = json.loads((root / "results" / "stats" / "paired" / "M-B.json").read_text())
    dist = rec["bootstrap_distribution"]
    assert sum(dist["counts"]) == rec["bootstrap"]["n_resamples"]
    assert dist["scheme"] == "seed x task"
    ci = rec["all"]["primary_ci"]
    assert dist["edges"][0] <= ci["lower"] < ci["upper"] <= dist["edges"][-1]


def _score(model, run, step, score, bounds=None):
    lo_hi = bounds or [score, score]
    return {
        "model": model,
        "evalset": "holdout",
        "run": run,
        "step": step,
        "score": score,
        "bounds": lo_hi,
    }


def test_holdout_curve_points_start_at_the_base_and_follow_the_steps():
    scores = [
        _score("O-s42", "O-s42", 4, 0.5),
        _score("base", "", 0, 0.2),
        _score("O-s42-step2", "O-s42", 2, 0.3),
        _score("B-s7", "B-s7", 4, None, [0.1, 0.4]),  # unresolved: the middle of its bounds
    ]
    points = figures.curve_points(scores)
    assert points == {
        "B-s7": [(0, 0.2, 0.2, 0.2), (4, 0.25, 0.1, 0.4)],
        "O-s42": [(0, 0.2, 0.2, 0.2), (2, 0.3, 0.3, 0.3), (4, 0.5, 0.5, 0.5)],
    }


def test_holdout_curve_without_a_base_and_its_errors():
    assert figures.curve_points([_score("O-s42", "O-s42", 4, 0.5)]) == {
        "O-s42": [(4, 0.5, 0.5, 0.5)]
    }
    two_bases = [_score("base", "", 0, 0.2), _score("base", "", 0, 0.2)]
    with pytest.raises(ValueError, match="2 base score records"):
        figures.curve_points(two_bases)
    twice = [_score("O-s42", "O-s42", 4, 0.5), _score("O-s42-x", "O-s42", 4, 0.5)]
    with pytest.raises(ValueError, match="two scores at one step"):
        figures.curve_points(twice)


def _sized(model, diagnostic, tasks, samples):
    return {"model": model, "diagnostic": diagnostic, "n_tasks": tasks, "n_samples": samples}


@pytest.mark.parametrize(
    "scores,expected",
    [
        ([_sized("base", False, 98, 4), _sized("O-s42", False, 98, 4)], "98 tasks x 4 samples"),
        (
            [_sized("base", False, 98, 4), _sized("O-s42-step4", True, 98, 4)],
            "98 tasks x 4 samples",
        ),
        (
            [
                _sized("base", False, 98, 4),
                _sized("O-s42-step4", True, 98, 1),
                _sized("O-s42", False, 98, 4),
            ],
            "98 tasks x 4 samples (base, endpoints), x 1 (intermediate)",
        ),
        (
            [_sized("base", False, 20, 2), _sized("O-s42", False, 98, 4)],
            "20/98 tasks x 2/4 samples",
        ),
    ],
)
def test_the_holdout_curve_says_what_its_points_were_measured_on(scores, expected):
    assert figures.curve_sizes(scores) == expected


@pytest.mark.parametrize(
    "seeds,expected",
    [
        # by number, not by the order met nor as text ("314159" < "42")
        (["314159", "42"], {42: "-", 314159: "--"}),
        ([42, 314159, 42], {42: "-", 314159: "--"}),
        ([7, 3, 5, 1, 9], {1: "-", 3: "--", 5: ":", 7: "-.", 9: "-"}),
    ],
)
def test_a_seed_has_one_line_style_in_every_figure(seeds, expected):
    assert figures.seed_styles(seeds) == expected
