"""dev/gpu_box_restats.py: where two statistics records first differ."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "gpu_box_restats", Path(__file__).resolve().parents[1] / "dev" / "gpu_box_restats.py"
)
restats = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = restats
SPEC.loader.exec_module(restats)


@pytest.mark.parametrize(
    ("here", "box", "expected"),
    [
        ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}, None),
        ({"a": 1.0}, {"a": 1.0000001}, ".a (1.0 here, 1.0000001 on the box)"),
        (
            {"a": {"ci": [0.1, 0.2]}},
            {"a": {"ci": [0.1, 0.3]}},
            ".a.ci[1] (0.2 here, 0.3 on the box)",
        ),
        ({"a": [1]}, {"a": [1, 2]}, ".a (lengths 1 and 2)"),
        ({"a": 1}, {"a": 1, "z": 0}, ".z (present on one side only)"),
        ({"a": None}, {"a": 0}, ".a (None here, 0 on the box)"),
    ],
)
def test_first_difference(here, box, expected):
    assert restats.first_difference(here, box) == expected


def test_a_directory_without_records_is_an_error(tmp_path, capsys):
    assert restats.main(tmp_path) == 2
    assert "no results/stats/paired" in capsys.readouterr().err
