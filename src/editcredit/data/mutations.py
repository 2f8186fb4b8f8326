"""Procedural mutation operators that plant one bug in a top-level function of a seed module.

An operator walks one function (docstrings, annotations, decorators and f-strings excluded)
and yields :class:`Site` objects: a character span of the source plus replacement texts built
from the original source text, so untouched sub-expressions keep their exact spelling.
:func:`enumerate_mutations` turns sites into :class:`Mutation` records, keeping those whose
mutated module parses, has a different AST and loses no comment; :func:`apply_mutation`
splices one in without changing any byte outside its span.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import random
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

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
_ATOM = 16  # binding strength of names, literals, calls, subscripts, displays
_BINOPS: tuple[type[ast.operator], ...]
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_BINOPS += (ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor, ast.BitOr)
_BINOP_WORDS = ["+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "^", "|"]
_BINOP_TEXT = dict(zip(_BINOPS, _BINOP_WORDS, strict=True))
_BINOP_PREC = {"|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9, "+": 10, "-": 10, "**": 13}  # else 11
_BINOP_SWAP = {"+": "-", "-": "+", "*": "//", "/": "//", "//": "%", "%": "//", "**": "*"}
_BINOP_SWAP |= {"<<": ">>", ">>": "<<", "&": "|", "|": "&", "^": "|"}
_CMPS: tuple[type[ast.cmpop], ...]
_CMPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is)
_CMPS += (ast.IsNot,)
_CMP_WORDS = ["<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"]
_CMP_TEXT = dict(zip(_CMPS, _CMP_WORDS, strict=True))
_CMP_FLIP = {word: _CMP_WORDS[i ^ 1] for i, word in enumerate(_CMP_WORDS)}  # pairs flip
_SWAP_BINOPS, _SWAP_CMPS = {"-", "/", "//", "%", "**"}, {"<", "<=", ">", ">=", "in", "not in"}
_UNARY_TEXT = {ast.Not: "not", ast.USub: "-", ast.Invert: "~"}
_PREC = {ast.Compare: 5, ast.IfExp: 1, ast.Lambda: 0, ast.Await: 14, ast.NamedExpr: -1}
_PREC |= {ast.Yield: -1, ast.YieldFrom: -1, ast.Starred: -1}
_SKIP_FIELDS = {"annotation", "returns", "type_comment", "decorator_list"}


class _Source:
    """Source text with conversions between ``ast`` positions and character offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, lineno: int, col: int) -> int:
        if not 1 <= lineno <= len(self.starts) or col < 0:
            raise ValueError(f"position {lineno}:{col} is outside the source")
        start = self.starts[lineno - 1]
        stop = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        prefix = self.text[start:stop].encode()[:col]
        if len(prefix) != col:
            raise ValueError(f"position {lineno}:{col} is outside the source")
        return start + len(prefix.decode())  # a split character raises UnicodeDecodeError

    def position(self, offset: int) -> tuple[int, int]:
        lineno = bisect.bisect_right(self.starts, offset)
        return lineno, len(self.text[self.starts[lineno - 1] : offset].encode())

    def span(self, node: ast.AST) -> tuple[int, int]:
        located = cast(Any, node)  # a node with a position (expression, statement, argument)
        start = self.offset(located.lineno, located.col_offset)
        return start, self.offset(located.end_lineno, located.end_col_offset)


def _gap(text: str, a: int, b: int) -> list[tuple[int, int, str]]:
    """Significant tokens (parentheses, operator words or symbols) between two operands."""
    toks, i = [], a
    while i < b:
        if text[i].isspace() or text[i] == "\\":
            i += 1
        elif text[i] == "#":
            while i < b and text[i] not in "\r\n":
                i += 1
        else:
            kind, j = _kind(text[i]), i + 1
            while kind != "(" and j < b and _kind(text[j]) == kind:
                j += 1
            toks.append((i, j, text[i:j]))
            i = j
    return toks


def _kind(c: str) -> str:
    if c in "()":
        return "("
    return "w" if c.isalnum() or c == "_" else "" if c.isspace() or c in "#\\" else "p"


def _split(src: _Source, node: ast.AST, operands: Sequence[ast.AST]):
    """Operand spans (with their own parentheses) and operator tokens of an n-ary node."""
    lo, node_end = src.span(node)
    full, ops = [], []
    for left, right in zip(operands, operands[1:], strict=False):
        a, b = src.span(left)[1], src.span(right)[0]
        toks = _gap(src.text, a, b)
        core = [t for t in toks if t[2] not in "()"]
        if not core:
            return None
        closers = [t for t in toks if t[0] < core[0][0]]
        openers = [t for t in toks if t[0] > core[-1][0]]
        full.append((lo, closers[-1][1] if closers else a))
        ops.append((core[0][0], core[-1][1], " ".join(t[2] for t in core)))
        lo = openers[0][0] if openers else b
    full.append((lo, node_end))
    return full, ops


def _prec(node: ast.AST) -> int:
    """Binding strength of an expression node (higher binds tighter)."""
    if isinstance(node, ast.BinOp):
        return _BINOP_PREC.get(_BINOP_TEXT[type(node.op)], 11)
    if isinstance(node, ast.UnaryOp):
        return 4 if isinstance(node.op, ast.Not) else 12
    if isinstance(node, ast.BoolOp):
        return 3 if isinstance(node.op, ast.And) else 2
    return _PREC.get(type(node), _ATOM)


def _is_docstring(node: ast.AST, parent: ast.AST) -> bool:
    if not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    value = getattr(node, "value", None)
    return parent.body[0] is node and isinstance(node, ast.Expr) and isinstance(value, ast.Constant)


def _walk(func: FunctionNode) -> list[tuple[ast.AST, ast.AST]]:
    """``(node, parent)`` pairs of the function's code, sorted by start position."""
    out: list[tuple[Any, ast.AST]] = []  # every node kept has a position (end_col_offset)

    def visit(node: ast.AST, parent: ast.AST) -> None:
        if isinstance(node, ast.JoinedStr) or _is_docstring(node, parent):
            return
        if getattr(node, "end_col_offset", None) is not None:
            out.append((node, parent))
        for name, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST) and name not in _SKIP_FIELDS:
                    visit(child, node)

    for child in [func.args, *func.body]:
        visit(child, func)
    return sorted(out, key=lambda pair: (pair[0].lineno, pair[0].col_offset))


def _operator(per_node: Callable[[ast.AST, ast.AST, _Source], Iterator[Site]]) -> Operator:
    """Turn a per-node site generator into a registered whole-function operator."""

    @functools.wraps(per_node)
    def operator(func: FunctionNode, source: str) -> Iterator[Site]:
        src = _Source(source)
        for node, parent in _walk(func):
            yield from per_node(node, parent, src)

    OPERATORS[per_node.__name__] = operator
    return operator


def _one(start: int, end: int, text: str) -> Site:
    return Site(start, end, (("", text),))


@_operator
def binop_swap(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Swap a binary or augmented-assignment operator by a fixed table:
    + <-> -, * -> //, / -> //, // <-> %, ** -> *, << <-> >>, & <-> |, ^ -> |."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        operands = (
            [node.left, node.right] if isinstance(node, ast.BinOp) else [node.target, node.value]
        )
        op, eq = _BINOP_TEXT[type(node.op)], "=" if isinstance(node, ast.AugAssign) else ""
        parts = _split(src, node, operands)
        if parts and op in _BINOP_SWAP and parts[1][0][2] == op + eq:
            yield _one(parts[1][0][0], parts[1][0][1], _BINOP_SWAP[op] + eq)


@_operator
def compare_flip(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Flip one comparison operator: < <-> <=, > <-> >=, == <-> !=, in <-> not in, is <-> is not."""
    if isinstance(node, ast.Compare):
        parts = _split(src, node, [node.left, *node.comparators])
        for op, (a, b, text) in zip(node.ops, parts[1] if parts else [], strict=False):
            if text == _CMP_TEXT[type(op)]:
                yield _one(a, b, _CMP_FLIP[text])


def _format_int(value: int, text: str) -> str:
    for prefix, spec in (("0x", "x"), ("0o", "o"), ("0b", "b")):
        if prefix in text.lower():
            return ("-" if value < 0 else "") + prefix + format(abs(value), spec)
    return str(value)


@_operator
def constant_shift(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Shift an int literal (not a bool; ``-n`` is one literal) to n+1 / n-1 (``inc`` / ``dec``)."""
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    target = cast(ast.UnaryOp, node).operand if negated else node
    if not (isinstance(target, ast.Constant) and type(target.value) is int):
        return
    if not negated and isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
        return  # shifted as part of the negative literal
    start, end = src.span(node)
    value = -target.value if negated else target.value
    pow_left = (
        isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow) and parent.left is node
    )
    tight = not negated and (pow_left or isinstance(parent, ast.Attribute))
    variants = []
    for name, new in (("inc", value + 1), ("dec", value - 1)):
        text = _format_int(new, src.text[start:end])
        variants.append((name, f"({text})" if new < 0 and tight else text))
    yield Site(start, end, tuple(variants))


@_operator
def negate_if(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Invert an ``if`` / ``elif`` / ternary: its test becomes ``not (<test>)``."""
    if isinstance(node, (ast.If, ast.IfExp)):
        start, end = src.span(node.test)
        text = src.text[start:end]
        yield _one(start, end, f"not {text}" if _prec(node.test) == _ATOM else f"not ({text})")


@_operator
def drop_condition(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Drop one operand of an ``and`` / ``or`` chain (variant ``drop<i>``; ``a and b`` -> b, a)."""
    if isinstance(node, ast.BoolOp) and (parts := _split(src, node, node.values)):
        full, (start, end), text = parts[0], src.span(node), src.text
        variants = [("drop0", text[full[1][0] : end])]
        for i in range(1, len(full)):
            variants.append((f"drop{i}", text[start : full[i - 1][1]] + text[full[i][1] : end]))
        yield Site(start, end, tuple(variants))


@_operator
def remove_assignment(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Replace a one-line assignment statement that is alone on its line with ``pass``."""
    if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return
    if node.lineno != node.end_lineno or node.value is None:
        return
    start, end = src.span(node)
    line_end = _NEWLINE.search(src.text, end)
    rest = src.text[end : line_end.start() if line_end else len(src.text)].strip()
    if not src.text[src.starts[node.lineno - 1] : start].strip() and rest[:1] in ("", "#"):
        yield _one(start, end, "pass")


def _wrapped(src: _Source, span: tuple[int, int], node: ast.AST, parens: bool) -> str:
    text = src.text[span[0] : span[1]]
    return f"({text})" if parens and span == src.span(node) else text


@_operator
def swap_operands(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Swap the operands of ``a - b`` (also ``/``, ``//``, ``%``, ``**``) or of a single
    ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in`` comparison."""
    if isinstance(node, ast.BinOp) and _BINOP_TEXT[type(node.op)] in _SWAP_BINOPS:
        left, right = node.left, node.right
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        if _CMP_TEXT[type(node.ops[0])] not in _SWAP_CMPS:
            return
        left, right = node.left, node.comparators[0]
    else:
        return
    parts = _split(src, node, [left, right])
    if parts is not None:
        (lspan, rspan), prec = parts[0], _prec(node)
        new_left = _wrapped(src, rspan, right, _prec(right) <= prec - (prec not in (5, 13)))
        new_right = _wrapped(src, lspan, left, _prec(left) <= prec - (prec == 13))
        yield _one(lspan[0], rspan[1], new_left + src.text[lspan[1] : rspan[0]] + new_right)


@_operator
def boolop_swap(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Swap ``and`` <-> ``or`` in one boolean chain (every operator of the chain)."""
    if isinstance(node, ast.BoolOp) and (parts := _split(src, node, node.values)):
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        ops = parts[1]
        if all(text == old for _, _, text in ops):
            pieces, cursor = [], ops[0][0]
            for a, b, _ in ops:
                pieces += [src.text[cursor:a], new]
                cursor = b
            yield _one(ops[0][0], ops[-1][1], "".join(pieces))


@_operator
def drop_unary(node: ast.AST, parent: ast.AST, src: _Source) -> Iterator[Site]:
    """Drop a unary ``not``, ``-`` or ``~``, keeping its operand."""
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_TEXT:
        (start, end), operand_start = src.span(node), src.span(node.operand)[0]
        toks = _gap(src.text, start, operand_start)
        if toks and toks[0][2] == _UNARY_TEXT[type(node.op)]:
            yield _one(start, end, src.text[toks[1][0] if len(toks) > 1 else operand_start : end])


def top_level_functions(source: str) -> list[str]:
    """Names of the module-level (async) functions of ``source``, in order, without repeats."""
    names = [n.name for n in ast.parse(source).body if isinstance(n, FunctionNode)]
    return list(dict.fromkeys(names))


def _comments(src: _Source) -> list[tuple[int, str]]:
    """``(offset, text)`` of every comment of the source."""
    tokens = tokenize.generate_tokens(io.StringIO(src.text, newline="").readline)
    return [
        (src.starts[t.start[0] - 1] + t.start[1], t.string)
        for t in tokens
        if t.type == tokenize.COMMENT
    ]


def _statement_lines(src: _Source, node: FunctionNode) -> tuple[int, int] | None:
    """Offsets of the whole lines of top-level ``node`` (its decorators to the end of its last
    line), or None where the source's parse depends on more than its lines (a future import
    that changes the grammar)."""
    if "barry_as_FLUFL" in src.text:
        return None
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    last = cast(int, node.end_lineno)
    end = src.starts[last] if last < len(src.starts) else len(src.text)
    return src.starts[first - 1], end


def _mutated_statement(
    source: str, lines: tuple[int, int] | None, position: int, site: Site, after: str
) -> ast.AST:
    """Statement ``position`` of ``source`` with ``site``'s span replaced by ``after``
    (SyntaxError or ValueError where that does not parse), parsing only the statement's own
    ``lines`` where they parse alone. Those lines begin at column 0 at a statement's start and
    end a line, so where they parse alone the module parses too: the statements before and
    after tokenize and parse as before, and this one into the same node but for its positions
    (which ``ast.dump`` leaves out). Where they do not, the whole module is parsed, as before."""
    if lines is not None and lines[0] <= site.start <= site.end <= lines[1]:
        a, b = lines
        try:
            body = ast.parse(source[a : site.start] + after + source[site.end : b]).body
        except (SyntaxError, ValueError):
            body = []
        if body:
            return body[0]
    return ast.parse(source[: site.start] + after + source[site.end :]).body[position]


def _find_function(tree: ast.Module, function: str) -> FunctionNode:
    found = [n for n in tree.body if isinstance(n, FunctionNode) and n.name == function]
    if not found:
        raise ValueError(f"{function!r} is not a top-level function of the source")
    return found[-1]  # the definition in effect


def _pad(text: str, start: int, end: int, after: str) -> str:
    """Keep a replacement from fusing with a neighbouring name, number or keyword."""
    if after and start > 0 and _kind(text[start - 1]) == _kind(after[0]) == "w":
        after = " " + after
    if after and end < len(text) and _kind(text[end]) == _kind(after[-1]) == "w":
        after += " "
    return after


def replaced_span(source: str, m: Mutation) -> str:
    """``source`` with the span of ``m`` replaced by ``m.after``, unchecked beyond the span:
    for a mutation :func:`enumerate_mutations` found in this very source, whose result it has
    already parsed (:func:`apply_mutation` checks any other).

    Raises ValueError if the span is not in the source or its text differs from ``m.before``.
    """
    src = _Source(source)
    start, end = src.offset(m.lineno, m.col), src.offset(m.end_lineno, m.end_col)
    if start > end or source[start:end] != m.before:
        raise ValueError(f"span of {m.mutation_id()} does not hold {m.before!r}")
    return source[:start] + m.after + source[end:]


def apply_mutation(source: str, m: Mutation) -> str:
    """Return ``source`` with the span of ``m`` replaced by ``m.after``; nothing else changes.

    Raises ValueError if the span is not in the source or its text differs from ``m.before``,
    or if the result equals the source or does not parse.
    """
    out = replaced_span(source, m)
    if out == source:
        raise ValueError(f"{m.mutation_id()} leaves the source unchanged")
    try:
        ast.parse(out)
    except SyntaxError as exc:
        raise ValueError(f"{m.mutation_id()} does not parse: {exc}") from exc
    return out


def enumerate_mutations(source: str, function: str) -> list[Mutation]:
    """Every valid mutation of top-level ``function``: by operator (registry order), then site.

    A candidate is kept only if the mutated module parses, its AST differs from the original
    and every comment inside the replaced span survives in the replacement. The function's own
    lines are parsed where they parse alone (the module then parses into the same node: see
    ``_mutated_statement``), the whole module where they do not.
    Raises ValueError if ``function`` is not a top-level function of ``source``.
    """
    tree = ast.parse(source)
    func, src = _find_function(tree, function), _Source(source)
    position, original, comments = tree.body.index(func), ast.dump(func), _comments(src)
    lines = _statement_lines(src, func)
    out: list[Mutation] = []
    for name, operator in OPERATORS.items():
        index = 0
        for site in sorted(operator(func, source), key=lambda s: (s.start, -s.end)):
            (line, col), (end_line, end_col) = src.position(site.start), src.position(site.end)
            inside = [text for at, text in comments if site.start <= at < site.end]
            kept = []
            for variant, after in site.variants:
                after, before = (
                    _pad(source, site.start, site.end, after),
                    source[site.start : site.end],
                )
                m = Mutation(
                    name, function, index, line, col, end_line, end_col, before, after, variant
                )
                if any(text not in after for text in inside):
                    continue
                try:  # only the function's span changed, so comparing its AST suffices
                    mutated = _mutated_statement(source, lines, position, site, after)
                except (SyntaxError, ValueError):
                    continue
                if ast.dump(mutated) != original:
                    kept.append(m)
            out.extend(kept)
            index += bool(kept)
    return out


def sample_mutations(source: str, function: str, rng: random.Random, k: int) -> list[Mutation]:
    """Up to ``k`` distinct mutations, operator-balanced and deterministic for ``rng``'s state.

    Each draw picks an operator uniformly among those with mutations left, then one of its
    remaining mutations uniformly. Raises ValueError if ``k`` is negative.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    pools: dict[str, list[Mutation]] = {}
    for m in enumerate_mutations(source, function):
        pools.setdefault(m.operator, []).append(m)
    chosen: list[Mutation] = []
    while len(chosen) < k and pools:
        operator = rng.choice(list(pools))
        pool = pools[operator]
        chosen.append(pool.pop(rng.randrange(len(pool))))
        if not pool:
            del pools[operator]
    return chosen
