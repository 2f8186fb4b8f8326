"""Figures: written as PDF and PNG, deterministic bytes, unresolved comparisons say so."""

from __future__ import annotations

import json

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
