"""editcredit.layout: names and paths built and read back by one module."""

from __future__ import annotations

import pytest

from editcredit import layout


@pytest.mark.parametrize("arm, seed", [("M", 42), ("O", 314159), ("E", 0)])
def test_run_names_round_trip(arm, seed):
    name = layout.run_name(arm, seed)
    assert name == f"{arm}-s{seed}"
    assert layout.parse_run(name) == layout.Run(arm, seed)
    assert layout.parse_run(name).name == name
    assert layout.is_run(name)


@pytest.mark.parametrize("name", ["base", "M-s42-step2", "M-s", "Ms42", "control-sx"])
def test_what_is_not_a_run_name_is_refused(name):
    assert not layout.is_run(name)
    with pytest.raises(ValueError, match="not a run name"):
        layout.parse_run(name)


def test_plan_order_and_diagnostic_names():
    assert layout.plan_runs({"O": [42, 7], "M": [42]}) == ["O-s42", "O-s7", "M-s42"]
    assert layout.diagnostic_model("M-s42", 2) == "M-s42-step2"
    assert layout.control_run_name(42) == "control-s42"


@pytest.mark.parametrize(
    "build, parse, args",
    [
        (layout.segment_dir, layout.parse_segment_dir, ("M-s42", 4)),
        (layout.audit_json, layout.parse_audit_json, ("B-s7", 2)),
        (layout.eval_slots, layout.parse_eval_slots, ("M-s42-step2", "holdout")),
    ],
)
def test_paths_round_trip(build, parse, args):
    path = build(*args)
    assert parse(path) == args
    assert parse(f"/some/checkout/{path}") == args


@pytest.mark.parametrize(
    "parse, path",
    [
        (layout.parse_segment_dir, "runs/M-s42/model"),
        (layout.parse_audit_json, "results/audits/M-s42/summary.parquet"),
        (layout.parse_eval_slots, "results/eval/base/holdout/scores.json"),
    ],
)
def test_a_foreign_path_is_refused_by_name(parse, path):
    with pytest.raises(ValueError, match=path):
        parse(path)


def test_patterns_and_builders_agree():
    assert layout.segment_dir("M-s42", 4) == layout.SEGMENT.format(run="M-s42", step=4)
    assert layout.segment_model_dir("M-s42", 4) == "runs/M-s42/step_4/model"
    assert layout.control_replay(42) == "results/training/control/s42.parquet"
    assert layout.stats_compare("M-B") == "results/stats/M-B.json"
    assert layout.stats_paired("M-B") == "results/stats/paired/M-B.json"
    assert layout.stats_scores("holdout") == "results/stats/scores/holdout.json"
    assert layout.stats_training("M") == "results/stats/training/M.json"
    assert layout.eval_model_scores("base", "broad") == "results/eval/base/broad/scores.json"
    assert layout.frozen_tasks("minibugs") == "data/frozen/minibugs/tasks.parquet"
    assert layout.controls_summary("minibugs") == "results/controls/minibugs/summary.json"
    assert layout.controls_tasks("minibugs") == "results/controls/minibugs/tasks"


def test_names_regex_matches_exactly_the_names():
    import re

    regex = layout.names_regex(["M-B", "M42-E42"])
    assert re.fullmatch(regex, "M-B") and re.fullmatch(regex, "M42-E42")
    assert not re.fullmatch(regex, "M-O")
    assert not re.fullmatch(layout.names_regex([]), "")


def test_no_other_code_splits_run_names_or_parses_output_paths():
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    banned = re.compile(r"""split\(["']-s["']|re\.compile\(r?["'][^"']*(runs/|results/|step_)""")
    offenders = []
    for top in ("src", "rules", "scripts"):
        for path in sorted((repo / top).rglob("*")):
            if path.suffix not in (".py", ".smk") or path.name == "layout.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if banned.search(line):
                    offenders.append(f"{path.relative_to(repo)}:{number}: {line.strip()}")
    assert not offenders, "use editcredit.layout:\n" + "\n".join(offenders)
