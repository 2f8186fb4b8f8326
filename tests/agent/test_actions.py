"""The minibugs action language: strict parsing, table-driven."""

from __future__ import annotations

import pytest

from editcredit.agent.actions import Action, FormatError, format_action, parse_action


@pytest.mark.parametrize(
    "text,action",
    [
        ("run", Action("run")),
        ("submit", Action("submit")),
        ("run\n", Action("run")),
        ("replace m.py:7\n    return a + b", Action("replace", "m.py", 7, "    return a + b")),
        ("replace pkg/m.py:12\n", Action("replace", "pkg/m.py", 12, "")),
    ],
)
def test_valid_actions(text, action):
    assert parse_action(text) == action


@pytest.mark.parametrize(
    "text,reason",
    [
        ("", "empty action"),
        ("Run", "unknown action"),
        ("run tests", "unknown action"),
        ("submit\nnow", "takes no further lines"),
        ("replace m.py:0\nx", "unknown action"),
        ("replace m.py 7\nx", "unknown action"),
        ("replace m.py:7", "exactly one line"),
        ("replace m.py:7\na\nb", "exactly one line"),
        ("\x00garbled\x1b[", "unknown action"),
    ],
)
def test_format_errors(text, reason):
    with pytest.raises(FormatError, match=reason):
        parse_action(text)


@pytest.mark.parametrize(
    "action", [Action("run"), Action("submit"), Action("replace", "a.py", 3, "  x = 1")]
)
def test_format_then_parse_roundtrips(action):
    assert parse_action(format_action(action)) == action
