"""Procedural mutation operators that plant one bug in a top-level function of a seed module.

An operator walks one function (docstrings, annotations, decorators and f-strings excluded)
and yields :class:`Site` objects: a character span of the source plus replacement texts built
from the original source text, so untouched sub-expressions keep their exact spelling.
:func:`enumerate_mutations` turns sites into :class:`Mutation` records, keeping those whose
mutated module parses and has a different AST; :func:`apply_mutation` splices one in without
changing any byte outside its span.
"""

from __future__ import annotations

import ast
import bisect
import functools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Mutation:
    """One planted bug: the span ``before`` of the source is replaced by ``after``.

    Positions follow the ``ast`` convention: 1-based lines, 0-based UTF-8 byte columns.
    ``site`` indexes the operator's sites in the function in source order; ``variant`` tells
    apart the replacements an operator offers at one site ("" when it offers one).
    """

    operator: str
    function: str
    site: int
    lineno: int
    col: int
    end_lineno: int
    end_col: int
    before: str
    after: str
    variant: str = ""

    def mutation_id(self) -> str:
        """Stable identifier ``function:operator:site`` plus ``:variant`` when there is one."""
        base = f"{self.function}:{self.operator}:{self.site}"
        return f"{base}:{self.variant}" if self.variant else base


@dataclass(frozen=True)
class Site:
    """A candidate span ``[start, end)`` (character offsets) and its ``(variant, text)`` options."""

    start: int
    end: int
    variants: tuple[tuple[str, str], ...]


Operator = Callable[[FunctionNode, str], Iterator[Site]]
OPERATORS: dict[str, Operator] = {}
"""Registry of mutation operators, in the order :func:`enumerate_mutations` applies them."""

_NEWLINE = re.compile(r"\r\n|\r|\n")
_ATOM = 16
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_BINOPS += (ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor, ast.BitOr)
_BINOP_TEXT = dict(zip(_BINOPS, "+ - * @ / // % ** << >> & ^ |".split(), strict=True))
_BINOP_PREC = dict(zip(_BINOPS, (10, 10, 11, 11, 11, 11, 11, 13, 9, 9, 8, 7, 6), strict=True))
_BINOP_SWAP = dict(pair.split(":") for pair in "+:- -:+ *:// /:// //:% %:// **:* <<:>> >>:<< &:| |:& ^:|".split())  # fmt: skip
_CMPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_CMP_TEXT = dict(zip(_CMPS, "< <= > >= == != in not_in is is_not".replace("_", " ").split(" ")))
_CMP_TEXT = dict(zip(_CMPS, ["<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"]))
_CMP_FLIP = {a: b for i, a in enumerate(_CMP_TEXT.values()) for b in [list(_CMP_TEXT.values())[i ^ 1]]}
_SWAP_BINOPS, _SWAP_CMPS = {"-", "/", "//", "%", "**"}, {"<", "<=", ">", ">=", "in", "not in"}
_UNARY_TEXT = {ast.Not: "not", ast.USub: "-", ast.Invert: "~"}
_PREC = {ast.Compare: 5, ast.IfExp: 1, ast.Lambda: 0, ast.Await: 14, ast.NamedExpr: -1}
_SKIP_FIELDS = {"annotation", "returns", "type_comment", "decorator_list"}
