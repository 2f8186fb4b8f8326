"""The conformance suite's CI subset, graded for real (docker): every project marked ``ci`` in
``conformance/projects.yaml`` matches its own runner test by test, its clean tree and benign
gold patch are ``valid_1`` with no tampering, and its planted bug is ``valid_0`` flipping the
same tests. Downloads and images are cached by content under ``cache/conformance``; the full
suite is ``editcredit conformance`` (docs/conformance.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from taskfactory import CONFIG, WEIGHTS

from editcredit.conformance.pins import load_pins
from editcredit.conformance.report import text_table
from editcredit.conformance.suite import run_suite, select_projects

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PINS = load_pins(ROOT / "conformance" / "projects.yaml")
CI = [p.name for p in select_projects(PINS, None, ci_only=True)]


@pytest.fixture(scope="module")
def results(docker_ready, tmp_path_factory):
    out = tmp_path_factory.mktemp("conformance")
    found = run_suite(
        [PINS.by_name(n) for n in CI],
        ROOT,
        ROOT / "cache" / "conformance",
        CONFIG["sandbox"],
        WEIGHTS,
        out,
        log=lambda _msg: None,
    )
    return {r.project: r for r in found}


@pytest.mark.parametrize("name", CI)
def test_ci_project_conforms(results, name):
    result = results[name]
    assert result.ok, text_table([result])
