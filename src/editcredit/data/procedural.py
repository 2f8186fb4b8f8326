"""Procedurally generated seed modules: random functions with random names, locals, constants
and shapes, each with tests whose expected values come from running the function itself.

A module from :func:`procedural_pool` is a :class:`SeedModule` like the hand-written pool's,
so the minibugs generator plants and validates bugs in it the same way (seeded mutations, every
task checked in the sandbox). Names are drawn from syllables the hand-written pool does not use,
so nothing of a generated function can be recalled from the holdout's seed functions: a policy
trained on them can only learn to read and copy what is on screen.

Every function is self-contained (it calls no other function of its module) and its tests call
only it, so a planted bug fails only that function's tests and leaves the others as
PASS_TO_PASS.
"""

from __future__ import annotations

import builtins
import keyword
import random
from collections.abc import Callable
from dataclasses import dataclass

from editcredit.data.minibugs.pool_files import SeedModule

SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ren",
    "tu",
    "sa",
    "vel",
    "dor",
    "pi",
    "nex",
    "qua",
    "zo",
    "bri",
    "mon",
    "tal",
    "ec",
    "ul",
    "fi",
    "gra",
    "hos",
)

#: Case words of generated test names (``test_<function>_<word>``).
CASE_WORDS = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "theta", "kappa")


def synthetic_name(rng: random.Random) -> str:
    """A pronounceable identifier of one to three syllable words (never a pool name)."""
    words = [
        "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        for _ in range(rng.randint(1, 3))
    ]
    return "_".join(words)


def short_name(rng: random.Random) -> str:
    """A local's name: one syllable word of two or three syllables."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def fresh_names(rng: random.Random, k: int, taken: set[str]) -> list[str]:
    """``k`` distinct local names, none in ``taken``, no keyword or builtin."""
    out: list[str] = []
    while len(out) < k:
        name = short_name(rng)
        if name in taken or keyword.iskeyword(name) or hasattr(builtins, name):
            continue
        taken.add(name)
        out.append(name)
    return out


Args = tuple
Sampler = Callable[[random.Random], Args]


@dataclass(frozen=True)
class Generated:
    """One generated function: its source text and a sampler of argument tuples."""

    source: str
    sample: Sampler


def _ints(lo: int, hi: int, n_lo: int = 3, n_hi: int = 6) -> Callable[[random.Random], list]:
    return lambda r: [r.randint(lo, hi) for _ in range(r.randint(n_lo, n_hi))]


def _cmp(rng: random.Random) -> str:
    return rng.choice(["<", "<=", ">", ">="])


def _arith(rng: random.Random) -> str:
    return rng.choice(["+", "-", "*"])


def guarded_sum(rng, name, v) -> Generated:
    items, limit, total, x = v
    c0, c1, c2 = rng.randint(0, 3), rng.randint(2, 5), rng.randint(1, 4)
    src = f'''def {name}({items}, {limit}):
    """Add up the items on one side of a limit, scaled, and charge the others."""
    {total} = {c0}
    for {x} in {items}:
        if {x} {_cmp(rng)} {limit}:
            {total} += {x} * {c1}
        else:
            {total} -= {c2}
    return {total}
'''
    return Generated(src, lambda r: (_ints(-9, 9)(r), r.randint(-5, 5)))


def banded_value(rng, name, v) -> Generated:
    a, b, diff = v[:3]
    c1, c2, c3, c4 = rng.randint(1, 9), rng.randint(1, 9), rng.randint(10, 40), rng.randint(2, 5)
    src = f'''def {name}({a}, {b}):
    """Map a pair of readings to a band value."""
    {diff} = {a} - {b}
    if {a} {_cmp(rng)} {c1} and {b} {_cmp(rng)} {c2}:
        return {c3}
    if not ({diff} {_cmp(rng)} 0):
        return {diff} * {c4}
    return {a} {_arith(rng)} {b}
'''
    return Generated(src, lambda r: (r.randint(-12, 12), r.randint(-12, 12)))


def count_residues(rng, name, v) -> Generated:
    items, k, count, i = v
    c1 = rng.randint(0, 2)
    src = f'''def {name}({items}, {k}):
    """Count the positions whose item leaves a given remainder."""
    {count} = 0
    for {i} in range(len({items})):
        if {items}[{i}] % {k} == {c1}:
            {count} += 1
    return {count}
'''
    return Generated(src, lambda r: (_ints(0, 30)(r), r.randint(3, 6)))


def clamp_between(rng, name, v) -> Generated:
    value, low, high = v[:3]
    c1 = rng.randint(1, 5)
    src = f'''def {name}({value}, {low}, {high}):
    """Clamp a value into a range, shifted by a fixed offset."""
    if {value} < {low}:
        return {low} + {c1}
    if {value} > {high}:
        return {high} - {c1}
    return {value}
'''
    return Generated(src, lambda r: (r.randint(-20, 40), r.randint(-5, 5), r.randint(10, 25)))


def running_best(rng, name, v) -> Generated:
    items, best, x, gap = v
    c1 = rng.randint(1, 4)
    src = f'''def {name}({items}):
    """The largest item and its gap to the first one."""
    {best} = {items}[0]
    for {x} in {items}[1:]:
        if {x} > {best}:
            {best} = {x}
    {gap} = {best} - {items}[0]
    return {best} * {c1} + {gap}
'''
    return Generated(src, lambda r: (_ints(-20, 20, 2, 6)(r),))


def weighted_formula(rng, name, v) -> Generated:
    a, b, part = v[:3]
    c1, c2, c3 = rng.randint(2, 7), rng.randint(2, 5), rng.randint(3, 9)
    src = f'''def {name}({a}, {b}):
    """A weighted combination of two counts."""
    {part} = ({a} * {c1} + {b}) // {c2}
    return {part} - {a} % {c3}
'''
    return Generated(src, lambda r: (r.randint(0, 50), r.randint(0, 50)))


def bit_pack(rng, name, v) -> Generated:
    hi, lo, word = v[:3]
    c1, c2 = rng.randint(2, 5), rng.choice([3, 7, 15])
    src = f'''def {name}({hi}, {lo}):
    """Pack two small fields into one word."""
    {word} = ({hi} << {c1}) | ({lo} & {c2})
    return {word}
'''
    return Generated(src, lambda r: (r.randint(0, 15), r.randint(0, 31)))


def first_index(rng, name, v) -> Generated:
    items, target, i = v[:3]
    c1 = rng.choice([-1, 0, 99])
    src = f'''def {name}({items}, {target}):
    """The index of the first item at least the target, or a marker."""
    for {i} in range(len({items})):
        if {items}[{i}] >= {target}:
            return {i}
    return {c1}
'''
    return Generated(src, lambda r: (sorted(_ints(0, 20)(r)), r.randint(0, 22)))


def step_walk(rng, name, v) -> Generated:
    start, steps, pos, k = v
    c1, c2 = rng.randint(2, 4), rng.randint(1, 3)
    src = f'''def {name}({start}, {steps}):
    """Walk from a start, stepping back on every multiple of a period."""
    {pos} = {start}
    for {k} in range(1, {steps} + 1):
        if {k} % {c1} == 0:
            {pos} -= {c2}
        else:
            {pos} += {k}
    return {pos}
'''
    return Generated(src, lambda r: (r.randint(-10, 10), r.randint(0, 9)))


def pair_score(rng, name, v) -> Generated:
    left, right, score = v[:3]
    c1, c2 = rng.randint(1, 5), rng.randint(2, 6)
    src = f'''def {name}({left}, {right}):
    """Score two lists position by position."""
    {score} = 0
    for a, b in zip({left}, {right}):
        if a == b:
            {score} += {c2}
        elif a > b or b - a > {c1}:
            {score} -= 1
    return {score}
'''
    return Generated(src, lambda r: (_ints(0, 6, 4, 4)(r), _ints(0, 6, 4, 4)(r)))


SHAPES: tuple[Callable[..., Generated], ...] = (
    guarded_sum,
    banded_value,
    count_residues,
    clamp_between,
    running_best,
    weighted_formula,
    bit_pack,
    first_index,
    step_walk,
    pair_score,
)


def _run(source: str, name: str, args: Args):
    scope: dict = {}
    exec(compile(source, "<generated>", "exec"), scope)  # noqa: S102 - our own generated code
    return scope[name](*args)


def generated_function(rng: random.Random, taken: set[str]) -> tuple[str, Generated]:
    """A new function of a random shape: (its name, its source and sampler)."""
    shape = rng.choice(SHAPES)
    while True:
        name = synthetic_name(rng)
        if name not in taken and not keyword.iskeyword(name):
            taken.add(name)
            break
    variables = fresh_names(rng, 4, set(taken) | {"a", "b", "i"})
    return name, shape(rng, name, variables)


def case_tests(
    module: str, name: str, made: Generated, rng: random.Random, cases: int
) -> list[str]:
    """Test functions ``assert name(args) == expected`` with distinct argument tuples, the
    expected values computed by running the function."""
    seen: set[str] = set()
    tests: list[str] = []
    for _ in range(cases * 10):
        args = made.sample(rng)
        call = f"{name}({', '.join(repr(a) for a in args)})"
        if call in seen:
            continue
        seen.add(call)
        expected = _run(made.source, name, args)
        word = CASE_WORDS[len(tests)]
        tests.append(
            f"def test_{name}_{word}():\n    from {module} import {name}\n"
            f"    assert {call} == {expected!r}\n"
        )
        if len(tests) == cases:
            break
    return tests


def procedural_module(seed: int, index: int, functions: int, cases: int = 5) -> SeedModule:
    """Module ``index`` of the procedural pool of ``seed``: ``functions`` generated functions
    and ``cases`` tests each (deterministic in ``seed`` and ``index``)."""
    rng = random.Random(f"procedural:{seed}:{index}")
    name = f"gen_{index:04d}_{short_name(rng)}"
    taken: set[str] = set()
    sources, tests = [], ["import pytest\n"]
    for _ in range(functions):
        fname, made = generated_function(rng, taken)
        sources.append(made.source)
        tests += case_tests(name, fname, made, rng, min(cases, len(CASE_WORDS)))
    doc = '"""Generated functions (procedural pool)."""\n\n\n'
    return SeedModule(name, doc + "\n\n".join(sources), "\n\n".join(tests))


def procedural_pool(seed: int, modules: int, functions: int, cases: int = 5) -> list[SeedModule]:
    """``modules`` generated modules of ``functions`` functions each."""
    return [procedural_module(seed, i, functions, cases) for i in range(modules)]
