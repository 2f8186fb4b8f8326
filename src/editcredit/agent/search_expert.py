"""A searching expert that acts only on what is visible: it never reads the gold fix.

It reads the seed function on screen, lists plausible single-line reversals of a planted bug
(the project's mutation operators applied to the buggy function, plus ``not (x)`` -> ``(x)``),
orders them by a prior per kind of reversal (config, tuned on the train split) with seeded
noise, and then tries them one by one: edit, run the visible tests, submit when they pass,
otherwise revert the edit and try the next, until the turn budget is spent. Its episodes hold
several edit blocks of different value (a wrong try and its revert, then the fix), and the
procedure transfers to functions never seen in training.

In an environment whose tries are scoped to their function (``agent.try_scope: function``) a
task with several seed functions (a multi-bug task) is searched one function at a time
(:func:`located_search_episode`): tries at a function until a run shows one more bug's test
passing, then on to the next function, the fix kept. Each function gets an equal share of the
turns left, so a function whose share runs out keeps its last (wrong) try: final patches hold
one block per function tried, fixes beside neutral or harmful tries.
"""

from __future__ import annotations

import ast
import functools
import math
import random
from dataclasses import dataclass
from typing import Any, cast

from editcredit.agent.actions import format_action
from editcredit.agent.experts import _edit
from editcredit.agent.protocol import Environment
from editcredit.data.mutations import enumerate_mutations, replaced_span
from editcredit.data.task import Task

#: The kind of the ``not (x)`` -> ``(x)`` reversal (drop_unary writes the same line; a line
#: written by both counts as the kind of the two weighed more).
UNNEGATE = "unnegate"


@dataclass(frozen=True)
class Reversal:
    """One candidate repair: line ``line`` (1-based) of ``path`` becomes ``new``."""

    kind: str
    path: str
    line: int
    old: str
    new: str


def seed_location(task: Task) -> tuple[str, str]:
    """(path, function) of the task's seed function (the function shown on screen)."""
    module, _, function = task.meta.get("seed_function", "").partition(".")
    if not function:
        raise ValueError(f"{task.instance_id}: meta.seed_function is missing")
    return f"{module}.py", function


def _unnegations(source: str, function: str) -> list[tuple[int, str]]:
    """(line, new line) for every one-line ``not (x)`` / ``not x`` in the function: the same
    line with the ``not`` dropped (``(x)`` / ``x``)."""
    lines = source.split("\n")
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.FunctionDef) and node.name == function):
            continue
        for sub in ast.walk(node):
            if not (isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not)):
                continue
            if sub.lineno != sub.end_lineno or sub.operand.end_lineno != sub.lineno:
                continue
            line = lines[sub.lineno - 1]
            raw = line.encode()
            text = raw[sub.col_offset : sub.end_col_offset].decode()
            if not text.startswith("not"):
                continue
            # drop the "not" alone: "not (x)" -> "(x)", the smallest edit that undoes it
            inner = text[len("not") :].lstrip()
            new = raw[: sub.col_offset].decode() + inner + raw[sub.end_col_offset :].decode()
            out.append((sub.lineno, new))
    return out


def reversal_candidates(
    source: str, path: str, function: str, kinds: dict[str, float]
) -> list[Reversal]:
    """Single-line repairs of ``function`` of the kinds with a positive weight in ``kinds``
    (operator names of :mod:`editcredit.data.mutations`, and ``unnegate``), one per distinct
    new line (of the kind with the larger weight), in source order.

    A pure function of its arguments, computed once per distinct call (every episode of a
    task, and the environment's list, ask for the same function's candidates)."""
    return list(_reversal_candidates(source, path, function, tuple(sorted(kinds.items()))))


@functools.lru_cache(maxsize=1024)
def _reversal_candidates(
    source: str, path: str, function: str, weighted: tuple[tuple[str, float], ...]
) -> tuple[Reversal, ...]:
    kinds = dict(weighted)
    lines = source.split("\n")
    found: dict[tuple[int, str], Reversal] = {}

    def keep(candidate: Reversal) -> None:
        """One candidate per (line, new line): of kinds that write the same line, the one
        with the larger weight (``not (x)`` -> ``(x)`` is both drop_unary and unnegate)."""
        key = (candidate.line, candidate.new)
        if key not in found or kinds[candidate.kind] > kinds.get(found[key].kind, 0.0):
            found[key] = candidate

    for m in enumerate_mutations(source, function):
        if kinds.get(m.operator, 0.0) <= 0 or m.lineno != m.end_lineno:
            continue
        # enumerate_mutations parsed this very text, so it is not parsed again
        new = replaced_span(source, m).split("\n")
        if len(new) != len(lines):
            continue
        keep(Reversal(m.operator, path, m.lineno, lines[m.lineno - 1], new[m.lineno - 1]))
    if kinds.get(UNNEGATE, 0.0) > 0:
        for n, new_line in _unnegations(source, function):
            keep(Reversal(UNNEGATE, path, n, lines[n - 1], new_line))
    return tuple(sorted(found.values(), key=lambda r: (r.line, r.kind, r.new)))


def search_order(
    candidates: list[Reversal], kinds: dict[str, float], rng: random.Random
) -> list[Reversal]:
    """Weighted random order without replacement (seeded): a candidate of weight w gets the
    key u ** (1 / w); larger keys first."""
    keyed = [(math.log(rng.random() or 1e-12) / kinds[c.kind], c) for c in candidates]
    return [c for _, c in sorted(keyed, key=lambda kc: -kc[0])]


def visible_tests_pass(observation: str) -> bool:
    """The environment's summary of a test run with no failure."""
    return observation.startswith("tests: ") and ", 0 failed" in observation.split("\n", 1)[0]


def search_episode(
    env: Environment,
    task: Task,
    rng: random.Random,
    kinds: dict[str, float],
    max_turns: int,
    style: str = "minimal",
    pool: int = 0,
    pool_seed: str = "",
) -> tuple[list[str], list[str]]:
    """Play one search episode through ``env``: (observations, actions) texts, where
    ``observations[k]`` precedes ``actions[k]``. With ``pool`` > 0 the episode orders only the
    task's candidate pool: the first ``pool`` of a weighted order seeded by ``pool_seed`` and
    the task (the same for every episode of the task, so their test runs are shared)."""
    if getattr(env, "try_scope", "file") == "function" and task.meta.get("seed_functions"):
        return located_search_episode(env, task, rng, kinds, max_turns, pool, pool_seed)
    path, function = seed_location(task)
    observations = [env.reset(task)]
    actions: list[str] = []
    # a search task is inline: its seed function is read from its files
    files = cast(dict[str, str], task.files)
    lines = files[path].split("\n")

    def act(text: str) -> tuple[str, bool]:
        observation, done = env.step(text)
        actions.append(text)
        if not done:
            observations.append(observation)
        return observation, done

    candidates = reversal_candidates(files[path], path, function, kinds)
    if pool > 0:
        shared = random.Random(f"{pool_seed}:{task.instance_id}:pool")
        candidates = search_order(candidates, kinds, shared)[:pool]
    order = search_order(candidates, kinds, rng)
    if getattr(env, "shows_candidates", False):
        # the environment's numbered list (agent.candidates): a try replaces the previous one
        shown = cast(Any, env).candidates  # an environment that shows candidates has them
        number = {(c.line, c.new): c.number for c in shown}
        steps: list[tuple[str, str | None]] = [
            (f"try {number[(c.line, c.new)]}", None) for c in order if (c.line, c.new) in number
        ]
    else:
        steps = []
        for cand in order:
            edit_there = _edit(lines, path, cand.line, cand.new, style)
            changed = [*lines[: cand.line - 1], cand.new, *lines[cand.line :]]
            edit_back = _edit(changed, path, cand.line, cand.old, style)
            if edit_there is not None and edit_back is not None:
                steps.append((format_action(edit_there), format_action(edit_back)))
    for there, back in steps:
        if len(actions) + 3 > max_turns:
            break
        _, done = act(there)
        if done:
            break
        observation, done = act("run")
        if done:
            break
        if visible_tests_pass(observation):
            act("submit")
            break
        if back is not None:
            _, done = act(back)
            if done:
                break
    if not env.end_reason and len(actions) < max_turns:
        act("submit")
    return observations[: len(actions)], actions


def failed_count(observation: str) -> int | None:
    """The failed count of the environment's summary of a test run (None: no counts)."""
    head = observation.split("\n", 1)[0]
    if not head.startswith("tests: ") or " failed" not in head:
        return None
    try:
        return int(head.rsplit(", ", 1)[1].split(" ", 1)[0])
    except (IndexError, ValueError):
        return None


def located_search_episode(
    env: Environment,
    task: Task,
    rng: random.Random,
    kinds: dict[str, float],
    max_turns: int,
    pool: int = 0,
    pool_seed: str = "",
) -> tuple[list[str], list[str]]:
    """One search episode over every seed function of ``task`` in an environment whose tries
    are scoped to their function (``agent.try_scope: function``, candidates shown): functions in
    a seeded order; at each, candidates in the weighted order of :func:`search_order` (its pool
    drawn per function as :func:`search_episode` draws it per task), each tried and run. A run
    whose failed count is at most the bugs still to fix (the task's bugs less the functions
    fixed, this one included) keeps the try and moves on; a clean run submits. A function gets
    ``turns left // functions left`` turns, so a function whose share runs out keeps its last
    try. (observations, actions) as :func:`search_episode` returns them."""
    observations = [env.reset(task)]
    actions: list[str] = []
    shown = cast(Any, env).candidates  # an environment that shows candidates has them

    def act(text: str) -> tuple[str, bool]:
        observation, done = env.step(text)
        actions.append(text)
        if not done:
            observations.append(observation)
        return observation, done

    functions = list(dict.fromkeys(c.function for c in shown))
    rng.shuffle(functions)
    bugs = len(task.bugs or ()) or len(functions)
    fixed = 0
    done = False
    for k, function in enumerate(functions):
        here = [
            Reversal(c.kind, c.path, c.line, c.old, c.new)
            for c in shown
            if c.function == function and kinds.get(c.kind, 0.0) > 0
        ]
        if pool > 0:
            shared = random.Random(f"{pool_seed}:{task.instance_id}:{function}:pool")
            here = search_order(here, kinds, shared)[:pool]
        number = {(c.line, c.new): c.number for c in shown if c.function == function}
        share = (max_turns - 1 - len(actions)) // (len(functions) - k)
        spent = 0
        for cand in search_order(here, kinds, rng):
            if spent + 2 > share or len(actions) + 3 > max_turns:
                break
            spent += 2
            _, done = act(f"try {number[(cand.line, cand.new)]}")
            if done:
                break
            observation, done = act("run")
            if done:
                break
            if visible_tests_pass(observation):
                act("submit")
                done = True
                break
            failed = failed_count(observation)
            if failed is not None and failed <= bugs - fixed - 1:
                fixed += 1
                break
        if done or env.end_reason:
            break
    if not env.end_reason and len(actions) < max_turns:
        act("submit")
    return observations[: len(actions)], actions
