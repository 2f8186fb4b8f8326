"""The long tier's list names tests that exist, and the marking reads node ids right."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tiers import LONG, is_long, split_nodeid

REPO = Path(__file__).resolve().parents[1]
TOY = ("tests/a/test_m.py", "tests/b/test_n.py::test_x")


@pytest.mark.parametrize(
    "nodeid, parts",
    [
        ("tests/a/test_m.py::test_x", ("tests/a/test_m.py", "test_x")),
        ("tests/a/test_m.py::test_x[1-a]", ("tests/a/test_m.py", "test_x")),
        ("tests/a/test_m.py::TestK::test_x[p]", ("tests/a/test_m.py", "test_x")),
        ("tests/a/test_m.py::test_x[a::b]", ("tests/a/test_m.py", "test_x")),
    ],
)
def test_split_nodeid(nodeid, parts):
    assert split_nodeid(nodeid) == parts


@pytest.mark.parametrize(
    "nodeid, long",
    [
        ("tests/a/test_m.py::test_anything[3]", True),  # the whole module
        ("tests/b/test_n.py::test_x", True),
        ("tests/b/test_n.py::test_x[docker]", True),  # every parameter
        ("tests/b/test_n.py::test_xy", False),  # a name that starts alike is another test
        ("tests/b/test_n.py::test_y", False),
        ("tests/a/test_m2.py::test_x", False),
    ],
)
def test_is_long(nodeid, long):
    assert is_long(nodeid, TOY) is long


def _defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


@pytest.mark.parametrize("entry", LONG)
def test_every_long_entry_names_a_test_that_exists(entry):
    path, _, name = entry.partition("::")
    assert path.startswith("tests/") and Path(path).name.startswith("test_"), entry
    assert (REPO / path).is_file(), f"tests/tiers.py: {entry}: no such test module"
    if name:
        assert name in _defined_tests(REPO / path), f"tests/tiers.py: {entry}: no such test"


def test_the_long_list_has_no_duplicate_and_no_test_inside_a_listed_module():
    assert len(set(LONG)) == len(LONG)
    modules = {e for e in LONG if "::" not in e}
    assert not [e for e in LONG if "::" in e and e.partition("::")[0] in modules]


def test_this_module_is_in_the_fast_tier(request):
    assert request.node.get_closest_marker("long") is None
    assert not is_long(request.node.nodeid)
