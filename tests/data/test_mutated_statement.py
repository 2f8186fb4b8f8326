"""A mutated function is parsed from its own lines where they parse alone, and the node is the
one the whole mutated module gives (the same ``ast.dump``; the same SyntaxError where it does
not parse), for every case where the two could part: decorators, trailing comments, a string
or bracket left open into the next function, a trailing backslash, a one-line function, a last
line without a newline, more than one statement, a grammar-changing future import."""

from __future__ import annotations

import ast

import pytest

from editcredit.data.mutations import (
    Site,
    _find_function,
    _mutated_statement,
    _Source,
    _statement_lines,
    enumerate_mutations,
)

MODULE = '''"""doc"""
import functools

X = [1,
     2]


@functools.cache
@staticmethod
def f(a, b):  # the function
    c = a + b  # a sum
    return c * 2   # trailing


def g(x): return x - 1


class K:
    s = """text"""


def h(y):
    if y < 0:
        return -y
    return y'''


def whole_module(source: str, position: int, site: Site, after: str) -> str:
    """What the module's own parse says: the dump of the statement, or the error's class."""
    try:
        tree = ast.parse(source[: site.start] + after + source[site.end :])
        return ast.dump(tree.body[position])
    except (SyntaxError, ValueError, IndexError) as exc:
        return type(exc).__name__


def alone_first(source: str, function: str, site: Site, after: str) -> str:
    tree = ast.parse(source)
    func = _find_function(tree, function)
    lines = _statement_lines(_Source(source), func)
    try:
        return ast.dump(_mutated_statement(source, lines, tree.body.index(func), site, after))
    except (SyntaxError, ValueError, IndexError) as exc:
        return type(exc).__name__


def position_of(source: str, function: str) -> int:
    tree = ast.parse(source)
    return tree.body.index(_find_function(tree, function))


def span_of(source: str, text: str) -> Site:
    start = source.index(text)
    return Site(start, start + len(text), ())


@pytest.mark.parametrize(
    ("source", "function", "old", "after"),
    [
        (MODULE, "f", "a + b", "a - b"),  # decorated, comments on its lines
        (MODULE, "f", "c * 2", "c * 3"),  # its last line, with a trailing comment
        (MODULE, "f", "a + b", "a - b )"),  # does not parse, alone or whole
        (MODULE, "f", "c * 2", 'c * """'),  # a string left open: closed further down
        (MODULE, "f", "c * 2", "c * (2"),  # a bracket left open
        (MODULE, "f", "c * 2", "c * 2 \\"),  # a trailing backslash
        (MODULE, "g", "x - 1", "x + 1"),  # a one-line function
        (MODULE, "g", "x - 1", "x; y = 2"),  # two statements on its line
        (MODULE, "h", "y < 0", "y <= 0"),  # the last function, no newline at the end
        (MODULE, "h", "return y", "return y\nz = 1"),  # a statement after it
        (MODULE, "h", "return y", "return y\n"),  # ends with a newline
        ("from __future__ import barry_as_FLUFL\n" + MODULE, "g", "x - 1", "x <> 1"),
        # a string opened in the function's lines and closed in a comment after them: only
        # the whole module parses, into another function
        ('def k(a):\n    return a\n# """\n', "k", "return a", 'return a + """'),
    ],
)
def test_the_statement_is_the_one_the_whole_module_parses_into(source, function, old, after):
    site = span_of(source, old)
    position = position_of(source, function)
    assert alone_first(source, function, site, after) == whole_module(source, position, site, after)


def test_a_site_outside_the_functions_lines_parses_the_whole_module():
    site = span_of(MODULE, "1,\n     2")
    position = position_of(MODULE, "f")
    expected = whole_module(MODULE, position, site, "1, 3")
    assert alone_first(MODULE, "f", site, "1, 3") == expected
    assert (
        alone_first(MODULE, "f", site, "1, (")
        == "SyntaxError"
        == whole_module(MODULE, position, site, "1, (")
    )


def reference_mutations(source: str, function: str) -> list:
    """enumerate_mutations with the whole module parsed for every variant (as it was)."""
    import editcredit.data.mutations as mutations

    def whole(source, lines, position, site, after):
        return ast.parse(source[: site.start] + after + source[site.end :]).body[position]

    original = mutations._mutated_statement
    mutations._mutated_statement = whole
    try:
        return enumerate_mutations(source, function)
    finally:
        mutations._mutated_statement = original


@pytest.mark.parametrize("function", ["f", "g", "h"])
def test_the_mutations_are_those_of_parsing_the_whole_module(function):
    found = enumerate_mutations(MODULE, function)
    assert found and found == reference_mutations(MODULE, function)
