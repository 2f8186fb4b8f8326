"""The two tiers of the suite (docs/testing.md).

The fast tier, ``./dev.sh test`` (``pytest -m "not long"``), is what a developer runs on every
change. The long tier, ``-m long``, holds the end-to-end tests that take minutes each: the
real study, SLURM, Ray, rebuilding bytes, whole workflows through Snakemake, training runs.
``./dev.sh test-all`` and CI (``.ci/run``: ``./dev.sh ci``) run both; nothing is left out.

tests/conftest.py marks every test that :func:`is_long` names with ``long``. An entry of
:data:`LONG` is a module (``tests/x/test_y.py``: every test in it) or one test
(``tests/x/test_y.py::test_z``: every parameter of it); tests/test_tiers.py checks that each
names a test that exists.
"""

from __future__ import annotations

#: the long tier; each entry's seconds on 2 cores are in docs/testing.md
LONG: tuple[str, ...] = (
    # the real study on a local model and per-instance images, to the paper
    "tests/workflow/test_real_study.py",
    # SLURM (a one-node cluster started by dev/slurm.sh) and Ray
    "tests/workflow/test_slurm_cluster.py",
    "tests/workflow/test_slurm_ray.py",
    "tests/rl/test_ray_cluster.py::test_make_workers_runs_rollout_actors_on_the_cluster",
    # bytes rebuilt and compared: a segment, an evaluation, the tables, the SFT base, the suite
    "tests/test_rebuild_bytes.py",
    "tests/policy/test_sft_reproducible.py",
    "tests/data/test_default_suite_pin.py",
    "tests/report/test_candidate_coverage.py::test_the_frozen_default_suite",
    "tests/data/test_freeze.py::test_generation_is_byte_identical_across_runs",
    "tests/grading/test_bug_controls.py",
    # whole workflows through Snakemake, every job run
    "tests/workflow/test_report_rules.py",
    "tests/workflow/test_retention_rules.py",
    "tests/workflow/test_stop_rules.py",
    "tests/workflow/test_audit_rules.py",
    "tests/workflow/test_train_rules.py",
    "tests/workflow/test_eval_rules.py::test_eval_rules_write_every_slot_file_and_scores_and_a_rerun_changes_nothing",
    "tests/replay/test_replay_rule.py",
    # training segments and the control replay run for real, with docker gradings
    "tests/rl/test_segment.py",
    "tests/rl/test_segment_budget.py",
    "tests/rl/test_control_budget.py",
    "tests/rl/test_storage.py::test_a_real_segment_stops_before_the_step_that_finds_too_few_inodes",
    "tests/agent/test_truth_control_segment.py",
    "tests/replay/test_replay_docker.py",
)


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``("tests/x.py", "test_z")`` for ``tests/x.py::test_z[a-b]`` (a class's test keeps
    only its own name; a parameter id is dropped)."""
    path, _, rest = nodeid.partition("::")
    name = rest.split("[", 1)[0].rsplit("::", 1)[-1]
    return path, name


def is_long(nodeid: str, long: tuple[str, ...] = LONG) -> bool:
    """Whether the test of ``nodeid`` (relative to the repository) is in the long tier."""
    path, name = split_nodeid(nodeid)
    return path in long or f"{path}::{name}" in long
