"""Tests for the procedural mutation operators of editcredit.data.mutations."""

from __future__ import annotations

import ast
import dataclasses
import io
import random
import textwrap
import tokenize

import pytest

from editcredit.data.mutations import (
    OPERATORS,
    Mutation,
    apply_mutation,
    enumerate_mutations,
    replaced_span,
    sample_mutations,
    top_level_functions,
)

REQUIRED = {
    "binop_swap",
    "compare_flip",
    "constant_shift",
    "negate_if",
    "drop_condition",
    "remove_assignment",
    "swap_operands",
    "boolop_swap",
}

# (operator, function body, every mutated body that operator yields, in enumeration order)
ROWS = [
    ("binop_swap", "return a + b", ["return a - b"]),
    ("binop_swap", "return a * b - c", ["return a // b - c", "return a * b + c"]),
    ("binop_swap", "return a // b % c", ["return a % b % c", "return a // b // c"]),
    ("binop_swap", "return a / b ** 2", ["return a // b ** 2", "return a / b * 2"]),
    ("binop_swap", "a += 1\nreturn a", ["a -= 1\nreturn a"]),
    ("binop_swap", "return (a)+(b)", ["return (a)-(b)"]),
    ("compare_flip", "return a < b <= c", ["return a <= b <= c", "return a < b < c"]),
    ("compare_flip", "return a == b", ["return a != b"]),
    ("compare_flip", "return a >= b", ["return a > b"]),
    ("compare_flip", "return a in xs", ["return a not in xs"]),
    ("compare_flip", "return a not in xs", ["return a in xs"]),
    ("compare_flip", "return a is None", ["return a is not None"]),
    ("compare_flip", "return a is not None", ["return a is None"]),
    ("constant_shift", "return a + 1", ["return a + 2", "return a + 0"]),
    ("constant_shift", "return xs[-1]", ["return xs[0]", "return xs[-2]"]),
    ("constant_shift", "return 0x10", ["return 0x11", "return 0xf"]),
    ("constant_shift", "return 0 ** a", ["return 1 ** a", "return (-1) ** a"]),
    ("constant_shift", "return True or a == 1", ["return True or a == 2", "return True or a == 0"]),
    ("constant_shift", "return a + 1.5", []),
    ("negate_if", "if a > 1:\n    return a\nreturn b", ["if not (a > 1):\n    return a\nreturn b"]),
    (
        "negate_if",
        "if a:\n    return 1\nelif b < c:\n    return 2\nreturn 3",
        [
            "if not a:\n    return 1\nelif b < c:\n    return 2\nreturn 3",
            "if a:\n    return 1\nelif not (b < c):\n    return 2\nreturn 3",
        ],
    ),
    ("negate_if", "return a if b else c", ["return a if not b else c"]),
    ("negate_if", "return a if b and c else xs", ["return a if not (b and c) else xs"]),
    ("drop_condition", "return a and b", ["return b", "return a"]),
    (
        "drop_condition",
        "return a or b < c or xs",
        ["return b < c or xs", "return a or xs", "return a or b < c"],
    ),
    (
        "drop_condition",
        "return (a or b) and c",
        ["return c", "return (a or b)", "return (b) and c", "return (a) and c"],
    ),
    ("remove_assignment", "x = a + 1\nreturn x", ["pass\nreturn x"]),
    (
        "remove_assignment",
        "x: int = a\nx += 1  # bump\nreturn x",
        ["pass\nx += 1  # bump\nreturn x", "x: int = a\npass  # bump\nreturn x"],
    ),
    ("remove_assignment", "x = 1; y = 2\nreturn x", []),
    ("remove_assignment", "x = (a +\n     b)\nreturn x", []),
    ("remove_assignment", "if a: x = 1\nelse: x = 2\nreturn x", []),
    ("remove_assignment", "x: int\nreturn a", []),
    ("swap_operands", "return a - b", ["return b - a"]),
    ("swap_operands", "return a * b - c", ["return c - a * b"]),
    ("swap_operands", "return a - b - c", ["return c - (a - b)", "return b - a - c"]),
    ("swap_operands", "return a - (b - c)", ["return (b - c) - a", "return a - (c - b)"]),
    ("swap_operands", "return a ** -b", ["return (-b) ** a"]),
    ("swap_operands", "return a ** b ** c", ["return (b ** c) ** a", "return a ** c ** b"]),
    ("swap_operands", "return (a) % b", ["return b % (a)"]),
    ("swap_operands", "return a < b", ["return b < a"]),
    ("swap_operands", "return a in xs", ["return xs in a"]),
    ("swap_operands", "return a + b == c", []),
    ("swap_operands", "return a < b < c", []),
    ("boolop_swap", "return a and b", ["return a or b"]),
    ("boolop_swap", "return a or b or c", ["return a and b and c"]),
    (
        "boolop_swap",
        "return a and (b or c)",
        ["return a or (b or c)", "return a and (b and c)"],
    ),
    ("drop_unary", "return not a", ["return a"]),
    ("drop_unary", "return not (a or b)", ["return (a or b)"]),
    ("drop_unary", "return -a + ~b", ["return a + ~b", "return -a + b"]),
    ("drop_unary", "return~a", ["return a"]),
]


def _func(body: str) -> str:
    return "def f(a, b, c, xs):\n" + textwrap.indent(body, "    ") + "\n"


@pytest.mark.parametrize(("operator", "body", "expected"), ROWS)
def test_operator_table(operator: str, body: str, expected: list[str]) -> None:
    source = _func(body)
    mutations = [m for m in enumerate_mutations(source, "f") if m.operator == operator]
    assert [apply_mutation(source, m) for m in mutations] == [_func(e) for e in expected]


def test_registry_has_required_operators_and_every_operator_is_tabled() -> None:
    assert set(OPERATORS) >= REQUIRED
    assert {row[0] for row in ROWS} == set(OPERATORS)


SEED = '''\
import math  # 1 + 1 < 2


def clamp(x, lo=0, hi=10):  # header comment
    """Clamp x into [lo, hi]; clamp(11) == 10 and 1 + 2 < 3 or not x."""
    # comment with code: if a < b and c: y = 1
    if x < lo or x is None:
        return lo  # low side
    elif (x > hi and  # still a comment
          hi >= 0):
        return hi

    def helper(v):
        """Nested docstring 42 - 1."""
        return v * 2

    y = -x if not x else x ** 2 - 1
    y += helper(1)
    s = "é" + str(y)  # café, naïve  # 7 // 2
    label = f"{x + 1:>{hi - 3}}"
    return x if y % 2 == 0 else (x // 3) - y


def other():
    return True + 1
'''


def _char_offset(source: str, lineno: int, col: int) -> int:
    lines = source.splitlines(keepends=True)
    return sum(map(len, lines[: lineno - 1])) + len(lines[lineno - 1].encode()[:col].decode())


def _comments(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string for t in tokens if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("source", [SEED, SEED.replace("\n", "\r\n")], ids=["lf", "crlf"])
def test_bytes_outside_span_unchanged(source: str) -> None:
    mutations = enumerate_mutations(source, "clamp")
    assert {m.operator for m in mutations} == set(OPERATORS)
    for m in mutations:
        start = _char_offset(source, m.lineno, m.col)
        end = _char_offset(source, m.end_lineno, m.end_col)
        assert source[start:end] == m.before
        out = apply_mutation(source, m)
        assert out == source[:start] + m.after + source[end:]
        assert out.encode().startswith(source[:start].encode())
        assert out.encode().endswith(source[end:].encode())
        assert _comments(out) == _comments(source)


def test_an_enumerated_mutation_spliced_unchecked_is_the_applied_one() -> None:
    # replaced_span skips apply_mutation's parse for mutations enumerated in the same source
    for source in (SEED, SEED.replace("\n", "\r\n")):
        mutations = enumerate_mutations(source, "clamp")
        assert mutations
        for m in mutations:
            assert replaced_span(source, m) == apply_mutation(source, m)
    wrong = replace_before(enumerate_mutations(SEED, "clamp")[0], "not there")
    with pytest.raises(ValueError, match="does not hold"):
        replaced_span(SEED, wrong)


def replace_before(m: Mutation, before: str) -> Mutation:
    return dataclasses.replace(m, before=before)


def test_every_mutation_parses_and_changes_the_ast() -> None:
    original = ast.dump(ast.parse(SEED))
    for m in enumerate_mutations(SEED, "clamp"):
        assert m.function == "clamp" and m.before != m.after
        assert ast.dump(ast.parse(apply_mutation(SEED, m))) != original


def test_mutations_stay_inside_the_function_and_skip_fstrings() -> None:
    tree = ast.parse(SEED)
    clamp = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "clamp")
    fstring_line = next(i for i, line in enumerate(SEED.splitlines(), 1) if 'f"{' in line)
    for m in enumerate_mutations(SEED, "clamp"):
        assert clamp.lineno <= m.lineno <= m.end_lineno <= clamp.end_lineno
        if m.lineno == fstring_line:  # only the whole statement may go, nothing inside the f-string
            assert m.operator == "remove_assignment" and m.before.startswith("label = ")


def test_docstrings_never_mutated() -> None:
    docstring_lines = {
        i for i, line in enumerate(SEED.splitlines(), 1) if '"""' in line or "# comment" in line
    }
    mutations = enumerate_mutations(SEED, "clamp")
    assert mutations
    for m in mutations:
        assert not docstring_lines & set(range(m.lineno, m.end_lineno + 1))
        out = apply_mutation(SEED, m)
        assert "1 + 2 < 3 or not x." in out and "Nested docstring 42 - 1." in out


def test_bools_not_shifted() -> None:
    source = _func("return a[0] if True else (False, 1, None)")
    shifted = [m.before for m in enumerate_mutations(source, "f") if m.operator == "constant_shift"]
    assert shifted == ["0", "0", "1", "1"]
    assert not [m for m in enumerate_mutations("def g():\n    return True\n", "g")]


def test_ids_unique_stable_and_sites_in_source_order() -> None:
    first, second = enumerate_mutations(SEED, "clamp"), enumerate_mutations(SEED, "clamp")
    assert first == second
    ids = [m.mutation_id() for m in first]
    assert len(ids) == len(set(ids))
    assert "clamp:constant_shift:0:inc" in ids and "clamp:binop_swap:0" in ids
    for operator in OPERATORS:
        ours = [m for m in first if m.operator == operator]
        assert [m.site for m in ours] == sorted(m.site for m in ours)
        assert sorted({m.site for m in ours}) == list(range(len({m.site for m in ours})))
        starts = [(m.lineno, m.col) for m in ours]
        assert starts == sorted(starts)
    order = list(OPERATORS)
    assert [order.index(m.operator) for m in first] == sorted(
        order.index(m.operator) for m in first
    )


def test_sample_is_deterministic_per_seed() -> None:
    runs = [sample_mutations(SEED, "clamp", random.Random(seed), 5) for seed in range(6)]
    assert sample_mutations(SEED, "clamp", random.Random(0), 5) == runs[0]
    assert any(run != runs[0] for run in runs[1:])


def test_sample_is_distinct_bounded_and_exhaustive() -> None:
    everything = enumerate_mutations(SEED, "clamp")
    picked = sample_mutations(SEED, "clamp", random.Random(3), 7)
    assert len(picked) == 7 and len(set(picked)) == 7 and set(picked) <= set(everything)
    assert sorted(
        sample_mutations(SEED, "clamp", random.Random(3), 10_000), key=everything.index
    ) == (everything)
    assert sample_mutations(SEED, "clamp", random.Random(3), 0) == []


def test_sample_is_operator_balanced() -> None:
    # 40 constant_shift mutations against a single compare_flip one.
    source = _func("return [" + ", ".join(map(str, range(1, 21))) + "] == a")
    counts = {op: 0 for op in OPERATORS}
    for seed in range(200):
        counts[sample_mutations(source, "f", random.Random(seed), 1)[0].operator] += 1
    assert counts["compare_flip"] + counts["constant_shift"] == 200
    assert 60 <= counts["compare_flip"] <= 140


def test_top_level_functions() -> None:
    source = textwrap.dedent(
        """\
        def a():
            def nested():
                pass
        class K:
            def method(self):
                pass
        async def b():
            return 1 + 2
        def a():
            pass
        """
    )
    assert top_level_functions(source) == ["a", "b"]
    assert [m.mutation_id() for m in enumerate_mutations(source, "b")][:1] == ["b:binop_swap:0"]


@pytest.mark.parametrize("name", ["missing", "helper", "method"])
def test_unknown_function_raises(name: str) -> None:
    source = SEED + "\n\nclass K:\n    def method(self):\n        return 1\n"
    with pytest.raises(ValueError, match=name):
        enumerate_mutations(source, name)
    with pytest.raises(ValueError, match=name):
        sample_mutations(source, name, random.Random(0), 1)


def test_apply_mutation_rejects_bad_mutations() -> None:
    source = _func("return a + 1")
    good = next(m for m in enumerate_mutations(source, "f") if m.operator == "binop_swap")
    cases = {
        "does not hold": Mutation(**{**vars(good), "before": "-"}),
        "outside": Mutation(**{**vars(good), "lineno": 99, "end_lineno": 99}),
        "unchanged": Mutation(**{**vars(good), "after": "+"}),
        "does not parse": Mutation(**{**vars(good), "after": "+)"}),
    }
    for message, mutation in cases.items():
        with pytest.raises(ValueError, match=message):
            apply_mutation(source, mutation)
    with pytest.raises(ValueError):
        sample_mutations(source, "f", random.Random(0), -1)


def test_mutation_id_format() -> None:
    plain = Mutation("binop_swap", "f", 2, 1, 0, 1, 1, "+", "-")
    assert plain.mutation_id() == "f:binop_swap:2"
    assert Mutation("constant_shift", "f", 0, 1, 0, 1, 1, "1", "2", "inc").mutation_id() == (
        "f:constant_shift:0:inc"
    )
