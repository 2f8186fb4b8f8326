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
        ("edit m.py add\n-\n+", Action("edit", "m.py", "add", "-", "+")),
        ("edit pkg/m.py f_2\nnot (x)\n", Action("edit", "pkg/m.py", "f_2", "not (x)", "")),
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
        ("edit m.txt f\na\nb", "unknown action"),
        ("edit m.py 7\na\nb", "unknown action"),
        ("edit m.py f g\na\nb", "unknown action"),
        ("edit m.py f\na", "exactly two lines"),
        ("edit m.py f\na\nb\nc", "exactly two lines"),
        ("edit m.py f\n\nb", "non-empty old fragment"),
        ("\x00garbled\x1b[", "unknown action"),
    ],
)
def test_format_errors(text, reason):
    with pytest.raises(FormatError, match=reason):
        parse_action(text)


@pytest.mark.parametrize(
    "action", [Action("run"), Action("submit"), Action("edit", "a.py", "f", "1", "2")]
)
def test_format_then_parse_roundtrips(action):
    assert parse_action(format_action(action)) == action


SCOPE = """def f(a, b):
    total = a + b
    if not (a > b):
        return a - 1
    return total + 1
"""


@pytest.mark.parametrize(
    "line_no,new_line,fragments",
    [
        (3, "    if a > b:", ("not (a > b)", "a > b")),
        (2, "    total = a - b", ("+", "-")),
        (5, "    return total - 1", ("total + ", "total - ")),
        (4, "        return a - 2", ("1", "2")),
        (5, "    return total + 2", ("+ 1", "+ 2")),
    ],
)
def test_minimal_fragment_is_short_and_first_in_scope(line_no, new_line, fragments):
    from editcredit.agent.actions import minimal_fragment

    lines = SCOPE.split("\n")
    offset = sum(len(x) + 1 for x in lines[: line_no - 1])
    old, new = minimal_fragment(SCOPE, offset, lines[line_no - 1], new_line)
    assert (old, new) == fragments
    at = SCOPE.find(old)
    assert at >= offset and SCOPE[:at] + new + SCOPE[at + len(old) :] == SCOPE.replace(
        lines[line_no - 1], new_line, 1
    )


def test_function_span_is_textual():
    from editcredit.agent.actions import function_span

    text = "def f():\n    x = (\n\ndef g():\n    pass\n"
    assert text[slice(*function_span(text, "f"))] == "def f():\n    x = (\n\n"
    assert function_span(text, "h") is None
