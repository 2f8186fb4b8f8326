"""The pinned list's records and the one-line edits (pure, table-driven)."""

from __future__ import annotations

from pathlib import Path

import pytest

from editcredit.conformance.edits import EditError, apply_edit, edit_diff
from editcredit.conformance.fetch import FetchError, pip_args, requirement_of
from editcredit.conformance.pins import Edit, PinsError, load_pins, parse_pins
from editcredit.sandbox.patches import split_patch

ROOT = Path(__file__).resolve().parents[2]
SHA = "a" * 64
EDIT = {"path": "m.py", "old": "x = 1", "new": "x = 2"}


def _project(**over):
    base = {"name": "p", "kind": "local", "path": "conformance/projects/p", "tests": ["t.py"]}
    return {**base, "gold": EDIT, "bug": {**EDIT, "new": "x = 3"}, **over}


def test_the_pinned_list_loads_and_every_local_tree_and_test_file_exists():
    pins = load_pins(ROOT / "conformance" / "projects.yaml")
    assert {"srcpkg", "unitmix", "asyncprop"} <= set(pins.names())
    for project in pins.projects:
        if project.kind == "local":
            tree = ROOT / project.path
            assert all((tree / t).is_file() for t in project.tests), project.name
            for edit in (project.gold, project.bug):
                apply_edit((tree / edit.path).read_text(encoding="utf-8"), edit)
        else:
            assert project.source is not None and project.version


@pytest.mark.parametrize(
    "over,message",
    [
        ({"kind": "zip"}, "kind: 'zip' is not one of"),
        ({"runner": "nose"}, "runner: 'nose' is not one of"),
        ({"path": ""}, "path: a local project needs its directory"),
        ({"kind": "sdist", "path": ""}, "source: required for kind sdist"),
        ({"kind": "sdist", "source": {"file": "a-1.tar.gz", "sha256": "XYZ"}}, "source.sha256"),
        ({"gold": {**EDIT, "new": "x = 1"}}, "gold: 'old' and 'new' are the same line"),
        ({"bug": {"path": "m.py", "old": "a\nb", "new": "c"}}, "bug.old: expected one line"),
        ({"deps": ["nothing"]}, "deps[0]: 'nothing' is not pinned"),
        ({"tests": []}, None),
        ({"colour": "red"}, "unknown field 'colour'"),
        (
            {"tests_from": {"file": "a-1.tar.gz", "sha256": SHA}},
            "tests_from: only a wheel project takes files from an sdist",
        ),
        (
            {"kind": "sdist", "source": {"file": "a-1.tar.gz", "sha256": SHA, "url": "ftp://x/a"}},
            "url",
        ),
        ({"name": "Bad Name"}, "name: expected a lower-case name"),
    ],
)
def test_bad_entries_name_the_file_project_and_field(over, message):
    data = {"wheels": {}, "projects": [_project(**over)]}
    if message is None:
        parse_pins(data, "pins.yaml")  # an empty test list is accepted by the schema
        return
    with pytest.raises(PinsError) as err:
        parse_pins(data, "pins.yaml")
    assert "pins.yaml: projects[0]" in str(err.value)
    assert message in str(err.value)


def test_duplicate_names_are_refused():
    with pytest.raises(PinsError, match=r"projects\[1\].name: duplicate 'p'"):
        parse_pins({"projects": [_project(), _project()]}, "pins.yaml")


@pytest.mark.parametrize(
    "text,edit,expected",
    [
        ("a\n    x = 1\nb\n", Edit("m", "    x = 1", "    x = 2"), "a\n    x = 2\nb\n"),
        ("x = 1", Edit("m", "x = 1", "x = 9"), "x = 9"),
        ("x = 1\r\ny\r\n", Edit("m", "x = 1", "x = 0"), "x = 0\r\ny\r\n"),
    ],
)
def test_apply_edit_replaces_the_one_line(text, edit, expected):
    assert apply_edit(text, edit) == expected


@pytest.mark.parametrize("text", ["x = 1\nx = 1\n", "y = 1\n", "  x = 1\n"])
def test_an_edit_whose_line_is_not_there_exactly_once_is_refused(text):
    with pytest.raises(EditError, match="occurs"):
        apply_edit(text, Edit("m.py", "x = 1", "x = 2"))


def test_edit_diff_is_a_patch_the_grader_reads():
    diff = edit_diff("a\nb\nx = 1\nc\n", Edit("pkg/m.py", "x = 1", "x = 2"))
    (section,) = split_patch(diff)
    assert section.paths == ["pkg/m.py"] or "pkg/m.py" in section.paths
    assert "-x = 1\n+x = 2\n" in diff


@pytest.mark.parametrize(
    "filename,expected",
    [
        ("requests-2.32.3.tar.gz", ("requests", "2.32.3", False)),
        ("pytest_asyncio-0.21.2-py3-none-any.whl", ("pytest_asyncio", "0.21.2", True)),
        ("scikit_learn-1.5.0.tar.gz", ("scikit_learn", "1.5.0", False)),
    ],
)
def test_requirement_of_file_names(filename, expected):
    assert requirement_of(filename) == expected


def test_pip_args_pick_sdist_or_wheel():
    from editcredit.conformance.pins import FilePin

    sdist = pip_args(FilePin("flask-3.1.3.tar.gz", SHA))
    assert sdist[-2:] == ["--no-binary", ":all:"] and "flask==3.1.3" in sdist
    wheel = pip_args(FilePin("numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.whl", SHA))
    assert "--only-binary" in wheel and "3.11" in wheel and "manylinux_2_17_x86_64" in wheel
    with pytest.raises(FetchError):
        requirement_of("notes.txt")
