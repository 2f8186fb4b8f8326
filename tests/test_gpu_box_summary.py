"""dev/gpu_box_summary.py: job spans and per-rule rows from a Snakemake log, the card's figures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "gpu_box_summary", Path(__file__).resolve().parents[1] / "dev" / "gpu_box_summary.py"
)
summary = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = summary  # its dataclass looks its module up
SPEC.loader.exec_module(summary)

LOG = """Building DAG of jobs...
[Mon Dec  7 17:16:03 2026]
localrule control:
    input: data/frozen/minibugs/tasks.parquet
    jobid: 7
    wildcards: suite=minibugs
[Mon Dec  7 17:16:40 2026]
Finished jobid: 7 (Rule: control)
[Mon Dec  7 17:16:41 2026]
rule base_model:
    jobid: 3
[Mon Dec  7 17:19:51 2026]
Finished jobid: 3 (Rule: base_model)
[Mon Dec  7 17:20:00 2026]
rule eval_model:
    jobid: 11
[Mon Dec  7 17:20:05 2026]
rule eval_model:
    jobid: 12
[Mon Dec  7 17:21:00 2026]
Finished jobid: 12 (Rule: eval_model)
[Mon Dec  7 17:21:30 2026]
Error in rule eval_model:
    jobid: 11
snakemake rc=1 wall=330s
"""


def test_jobs_are_spanned_from_their_start_to_their_finish():
    jobs = summary.parse_log(LOG.splitlines())
    assert {i: (j.rule, j.end is not None, j.failed) for i, j in jobs.items()} == {
        7: ("control", True, False),
        3: ("base_model", True, False),
        11: ("eval_model", False, True),
        12: ("eval_model", True, False),
    }


@pytest.mark.parametrize(
    "rule,row",
    [
        ("control", (1, 0.0, 37.0, 37.0, 37.0)),
        ("base_model", (1, 38.0, 228.0, 190.0, 190.0)),
        # the failed job counts to its start (237 s); the finished one ran 55 s
        ("eval_model", (2, 237.0, 297.0, 55.0, 55.0)),
    ],
)
def test_each_rule_has_its_jobs_first_start_last_end_and_walls(rule, row):
    rows = {r[0]: r[1:] for r in summary.rule_rows(summary.parse_log(LOG.splitlines()))}
    assert rows[rule] == row
    assert list(rows) == ["control", "base_model", "eval_model"]  # by first start


def test_the_card_is_averaged_over_its_samples(tmp_path):
    smi = tmp_path / "smi.csv"
    smi.write_text(
        "timestamp, utilization.gpu [%], memory.used [MiB]\n"
        "2026/12/07 17:16:03.000, 10 %, 1000 MiB\n"
        "2026/12/07 17:16:04.000, 30 %, 3000 MiB\n"
        "2026/12/07 17:16:05.000, [N/A], [N/A]\n"
    )
    assert summary.card(smi) == (2, 20.0, 2000.0, 3000.0)
