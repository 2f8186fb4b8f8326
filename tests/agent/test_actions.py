"""The minibugs action language: strict parsing (diff-marked fragments), unique fragments,
table-driven."""

from __future__ import annotations

import re

import pytest

from editcredit.agent.actions import (
    Action,
    FormatError,
    apply_edit,
    format_action,
    line_fragment,
    minimal_fragment,
    occurrences,
    parse_action,
)


@pytest.mark.parametrize(
    "text,action",
    [
        ("run", Action("run")),
        ("submit", Action("submit")),
        ("run\n", Action("run")),
        ("edit m.py\n- -\n+ +", Action("edit", "m.py", "-", "+")),
        ("edit pkg/m.py\n- not (x)\n+ ", Action("edit", "pkg/m.py", "not (x)", "")),
        ("edit m.py\n-     x = 1\n+     x = 2", Action("edit", "m.py", "    x = 1", "    x = 2")),
        ("edit m.py\n- a\n+ - b", Action("edit", "m.py", "a", "- b")),
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
        ("edit m.txt\n- a\n+ b", "unknown action"),
        ("edit m.py f\n- a\n+ b", "unknown action"),  # the function name is no longer part of it
        ("edit  m.py\n- a\n+ b", "unknown action"),
        ("edit\n- a\n+ b", "unknown action"),
        ("edit m.py\n- a", "exactly two lines (old, new), got 1"),
        ("edit m.py\n- a\n", "must start with '+ '"),
        ("edit m.py\n- a\n+ b\n+ c", "exactly two lines (old, new), got 3"),
        ("edit m.py\na\n+ b", "must start with '- '"),
        ("edit m.py\n-a\n+ b", "must start with '- '"),
        ("edit m.py\n- a\nb", "must start with '+ '"),
        ("edit m.py\n- a\n+", "must start with '+ '"),
        ("edit m.py", "exactly two lines"),
        ("edit m.py\n- \n+ b", "non-empty old fragment"),
        ("\x00garbled\x1b[", "unknown action"),
        ("<truncated>", "unknown action"),
    ],
)
def test_format_errors(text, reason):
    with pytest.raises(FormatError, match=re.escape(reason)):
        parse_action(text)


@pytest.mark.parametrize(
    "action",
    [
        Action("run"),
        Action("submit"),
        Action("edit", "a.py", "1", "2"),
        Action("edit", "a.py", "x", ""),
    ],
)
def test_format_then_parse_roundtrips(action):
    assert parse_action(format_action(action)) == action


@pytest.mark.parametrize(
    "text,old,new,result,why",
    [
        ("a = 1\nb = 2\n", "b = 2", "b = 3", "a = 1\nb = 3\n", ""),
        ("a = 1\nb = 2\n", "= 1", "= 5", "a = 5\nb = 2\n", ""),
        ("a = 1\nb = 1\n", "= 1", "= 5", None, "occurs 2 times"),
        ("a = 1\n", "c", "d", None, "does not occur"),
        ("aaa\n", "aa", "b", None, "occurs 2 times"),  # overlapping occurrences count
    ],
)
def test_apply_edit_needs_a_unique_old_fragment(text, old, new, result, why):
    after, reason = apply_edit(text, old, new)
    assert after == result and why in reason
    assert occurrences(text, old) >= (1 if result is not None else 0)


FILE = """def f(a, b):
    total = a + b
    if not (a > b):
        return a - 1
    return total + 1


def g(a):
    return a + 1
"""


@pytest.mark.parametrize(
    "line_no,new_line,fragments",
    [
        (3, "    if a > b:", ("not (a > b)", "a > b")),
        (2, "    total = a - b", ("a + b", "a - b")),  # "+", "a +" occur more than once
        (4, "        return a + 1", ("-", "+")),  # "-" is unique in the file
        (5, "    return total - 1", ("total +", "total -")),
        (5, "    return total + 2", ("total + 1", "total + 2")),
        (9, "    return a - 1", ("a + 1", "a - 1")),  # unique in the file, not the function
        (4, "        return -a - 1", ("return a -", "return -a -")),  # insertion
        (2, "    total = a <= b", ("a + b", "a <= b")),
    ],
)
def test_minimal_fragment_is_short_token_aligned_and_unique_in_the_file(
    line_no, new_line, fragments
):
    lines = FILE.split("\n")
    offset = sum(len(x) + 1 for x in lines[: line_no - 1])
    old, new = minimal_fragment(FILE, offset, lines[line_no - 1], new_line)
    assert (old, new) == fragments
    after, _ = apply_edit(FILE, old, new)
    assert (
        after == FILE.replace(lines[line_no - 1], new_line, 1)
        or after.split("\n")[line_no - 1] == new_line
    )


def test_no_fragment_when_the_whole_line_is_not_unique():
    text = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    assert minimal_fragment(text, text.index("    pass"), "    pass", "    x = 1") is None
    assert line_fragment(text, text.index("    pass"), "    pass", "    x = 1") is None


def test_line_fragment_is_the_changed_line_without_indentation():
    lines = FILE.split("\n")
    offset = sum(len(x) + 1 for x in lines[:2])
    assert line_fragment(FILE, offset, lines[2], "    if a > b:") == (
        "if not (a > b):",
        "if a > b:",
    )


def test_function_span_is_textual():
    from editcredit.agent.actions import function_span

    text = "def f():\n    x = (\n\ndef g():\n    pass\n"
    assert text[slice(*function_span(text, "f"))] == "def f():\n    x = (\n\n"
    assert function_span(text, "h") is None
