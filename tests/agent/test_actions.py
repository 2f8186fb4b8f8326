"""The minibugs action language: strict parsing (diff-marked fragments), unique fragments,
table-driven."""

from __future__ import annotations

import re

import pytest

from editcredit.agent.actions import (
    Action,
    FormatError,
    anchored_fragment,
    apply_action_edit,
    apply_edit,
    format_action,
    line_fragment,
    minimal_fragment,
    numbered,
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
        ("edit m.py:7\n- <\n+ <=", Action("edit", "m.py", "<", "<=", line=7)),
        ("edit pkg/m.py:120\n- not \n+ ", Action("edit", "pkg/m.py", "not ", "", line=120)),
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
        ("edit m.py:0\n- a\n+ b", "unknown action"),
        ("edit m.py:\n- a\n+ b", "unknown action"),
        ("edit m.py:x\n- a\n+ b", "unknown action"),
        ("edit m.py:07\n- a\n+ b", "unknown action"),
        ("edit m.py: 7\n- a\n+ b", "unknown action"),
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


ANCHOR_SOURCE = "def f(a, b):\n    if a < b:\n        return a < b\n    return b < a\n"


@pytest.mark.parametrize(
    "line,old,new,result,why",
    [
        (2, "<", "<=", "    if a <= b:", ""),
        (3, "a < b", "b", "        return b", ""),
        (4, "b < a", "a", "    return a", ""),
        (2, "if ", "", "    a < b:", ""),
        (2, ">", "<", None, "the old text does not occur in line 2"),
        (3, "r", "c", None, "the old text occurs 2 times in line 3"),
        (9, "a", "c", None, "there is no line 9"),
    ],
)
def test_an_anchored_edit_changes_its_line_only(line, old, new, result, why):
    """The old fragment need only be unique in the named line (here "<" occurs three times
    in the file): the other lines keep their bytes."""
    text, got = apply_action_edit(ANCHOR_SOURCE, Action("edit", "m.py", old, new, line=line))
    assert got == why
    if result is None:
        assert text is None
        return
    lines = ANCHOR_SOURCE.split("\n")
    assert text == "\n".join([*lines[: line - 1], result, *lines[line:]])


def test_an_unanchored_action_edit_is_a_file_edit():
    action = Action("edit", "m.py", "return b\n", "return a\n")
    assert apply_action_edit(ANCHOR_SOURCE, action) == apply_edit(
        ANCHOR_SOURCE, "return b\n", "return a\n"
    )


@pytest.mark.parametrize(
    "old_line,new_line,fragments",
    [
        ("    if a < b and a < c:", "    if a <= b and a < c:", ("a < b", "a <= b")),
        ("    if not (a < b):", "    if (a < b):", ("not ", "")),
        ("    return a - 1", "    return a + 1", ("-", "+")),
        ("    x = 1", "    x = 1", None),
    ],
)
def test_anchored_fragments_are_unique_in_their_line(old_line, new_line, fragments):
    assert anchored_fragment("unused", 0, old_line, new_line) == fragments


def test_an_anchored_action_round_trips_through_its_text():
    action = Action("edit", "m.py", "<", "<=", line=12)
    assert format_action(action) == "edit m.py:12\n- <\n+ <="
    assert parse_action(format_action(action)) == action


def test_numbered_lines_start_where_told():
    assert numbered("a\nb", 7) == "7: a\n8: b"
