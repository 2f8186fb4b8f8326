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
        ("edit m.py:7\n-\n+", Action("edit", "m.py", 7, "-", "+")),
        ("edit pkg/m.py:12\nnot (x)\n", Action("edit", "pkg/m.py", 12, "not (x)", "")),
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
        ("edit m.txt:3\na\nb", "unknown action"),
        ("edit m.py 7\na\nb", "unknown action"),
        ("edit m.py:0\na\nb", "unknown action"),
        ("edit m.py:7\na", "exactly two lines"),
        ("edit m.py:7\na\nb\nc", "exactly two lines"),
        ("edit m.py:7\n\nb", "non-empty old fragment"),
        ("\x00garbled\x1b[", "unknown action"),
    ],
)
def test_format_errors(text, reason):
    with pytest.raises(FormatError, match=reason):
        parse_action(text)


@pytest.mark.parametrize(
    "action", [Action("run"), Action("submit"), Action("edit", "a.py", 3, "1", "2")]
)
def test_format_then_parse_roundtrips(action):
    assert parse_action(format_action(action)) == action


@pytest.mark.parametrize(
    "old_line,new_line,fragments",
    [
        (
            "    if not (value > high):",
            "    if value > high:",
            ("not (value > high)", "value > high"),
        ),
        ("    pass", "    total = 0", ("pass", "total = 0")),
        ("x = a + b", "x = a - b", ("+", "-")),
        ("    return n - 10", "    return n - 1", ("10", "1")),
        ("a < b and c < d", "a < b and c <= d", ("<", "<=")),
    ],
)
def test_minimal_fragment_reproduces_the_line(old_line, new_line, fragments):
    from editcredit.agent.actions import minimal_fragment

    old, new = minimal_fragment(old_line, new_line)
    assert old_line.replace(old, new, 1) == new_line
    if fragments[0] != "<":
        assert (old, new) == fragments
