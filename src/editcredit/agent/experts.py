"""Scripted expert episodes for supervised training of the base policy.

Experts know the gold fix. Some go straight to it; others first make a wrong or neutral edit,
run the tests, then repair it, so that trajectories hold several edit blocks of mixed value.
On a multi-bug task played with tries scoped to their function (``agent.try_scope:
function``, ``located``) the expert runs the tests after each bug's fix, so every bug's fix is
a block of its own (eligible by region, agent/edit_blocks.py).
"""

from __future__ import annotations

import random
import re
from typing import cast

from editcredit.agent.actions import ANCHORED_STYLES, FRAGMENT_STYLES, Action, format_action
from editcredit.data.task import Task

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_single_file_diff(text: str, diff: str) -> str:
    """Apply a one-file unified diff (as written by diff_trees) to ``text`` in memory."""
    old = text.split("\n")
    out: list[str] = []
    cursor = 0
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        i += 1
        if not m:
            continue
        start = int(m.group(1)) - 1 if m.group(2) != "0" else int(m.group(1))
        out.extend(old[cursor:start])
        cursor = start
        while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\"):
            tag, body = lines[i][:1], lines[i][1:]
            if tag == " ":
                out.append(old[cursor])
                cursor += 1
            elif tag == "-":
                if old[cursor] != body:
                    raise ValueError(f"diff does not match line {cursor + 1}")
                cursor += 1
            elif tag == "+":
                out.append(body)
            i += 1
    out.extend(old[cursor:])
    return "\n".join(out)


def fix_lines(task: Task) -> tuple[str, list[tuple[int, str]]] | None:
    """(path, [(line, fixed text)]) when the gold fix replaces lines one for one."""
    if task.files is None:
        return None
    path = task.patch.split("\n", 1)[0].split(" b/")[-1]
    mutated = task.files[path]
    original = apply_single_file_diff(mutated, task.patch)
    a, b = mutated.split("\n"), original.split("\n")
    if len(a) != len(b):
        return None
    pairs = [(n + 1, new) for n, (old, new) in enumerate(zip(a, b, strict=True)) if old != new]
    return (path, pairs) if pairs else None


def _function_lines(task: Task, path: str) -> list[int]:
    """Body lines of the seed function (candidates for a detour edit)."""
    import ast

    function = task.meta.get("seed_function", ".").split(".", 1)[1]
    # an inline task: fix_lines read its fix from ``files``
    for node in ast.parse(cast(dict[str, str], task.files)[path]).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            # ast.parse sets every node's end position
            return list(range(node.body[0].lineno, cast(int, node.end_lineno) + 1))
    return []


_WRONG = [
    ("+", "-"),
    ("-", "+"),
    ("<=", "<"),
    ("<", "<="),
    (">", ">="),
    ("==", "!="),
    (" and ", " or "),
    ("1", "2"),
    ("0", "1"),
]


def wrong_edit(line: str, rng: random.Random) -> str | None:
    """A plausible but wrong change of one line (None if no rule applies)."""
    options = [(a, b) for a, b in _WRONG if a in line.split("#")[0]]
    if not options:
        return None
    a, b = rng.choice(options)
    return line.replace(a, b, 1)


def _edit(
    lines: list[str], path: str, n: int, new_line: str, style: str = "minimal"
) -> Action | None:
    """The fragment edit that turns line n (1-based) of ``lines`` into ``new_line`` (None when
    no single-line fragment of that line is unique in the file, or in the line for an anchored
    style, whose edit names line n)."""
    text = "\n".join(lines)
    line_start = sum(len(x) + 1 for x in lines[: n - 1])
    fragments = FRAGMENT_STYLES[style](text, line_start, lines[n - 1], new_line)
    if fragments is None:
        return None
    return Action("edit", path, *fragments, line=n if style in ANCHORED_STYLES else 0)


def expert_actions(
    task: Task,
    rng: random.Random,
    detour_prob: float,
    run_prob: float,
    style: str = "minimal",
    located: bool = False,
) -> list[str] | None:
    """One expert episode as action texts, or None when the task has no line-level fix
    expressible as unique fragments. ``style``: 'minimal' (the shortest unique token-aligned
    fragment) or 'line' (the whole changed line). ``located``: a run after each planted bug's
    fix of a multi-bug task but the last (its bugs' hunks, :func:`bug_of_line`)."""
    fix = fix_lines(task)
    if fix is None:
        return None
    path, pairs = fix
    lines = cast(dict[str, str], task.files)[path].split("\n")  # inline: fix_lines found a fix
    actions: list[Action] = []
    if rng.random() < detour_prob:
        fix_set = {n for n, _ in pairs}
        candidates = [n for n in _function_lines(task, path) if n not in fix_set]
        rng.shuffle(candidates)
        for n in candidates:
            old = lines[n - 1]
            wrong = wrong_edit(old, rng)
            if wrong is None or wrong == old:
                continue
            detoured = [*lines[: n - 1], wrong, *lines[n:]]
            there = _edit(lines, path, n, wrong, style)
            back = _edit(detoured, path, n, old, style)
            if there is None or back is None:
                continue
            actions += [there, Action("run"), back]
            break
    current = list(lines)
    owner = bug_of_line(task) if located else {}
    for k, (n, text) in enumerate(pairs):
        if k and owner.get(n) != owner.get(pairs[k - 1][0]):
            actions.append(Action("run"))  # the previous bug's fix is a block of its own
        edit = _edit(current, path, n, text, style)
        if edit is None:
            return None
        actions.append(edit)
        current[n - 1] = text
    if rng.random() < run_prob:
        actions.append(Action("run"))
    actions.append(Action("submit"))
    return [format_action(a) for a in actions]


def bug_of_line(task: Task) -> dict[int, int]:
    """line (1-based, in the task's tree) -> index of the planted bug whose gold hunk changes
    it; empty for a task without ``bugs``."""
    out: dict[int, int] = {}
    for k, bug in enumerate(task.bugs or ()):
        line = 0
        for row in bug.patch.split("\n"):
            m = _HUNK.match(row)
            if m:
                line = int(m.group(1))
            elif line and row[:1] == "-" and not row.startswith("---"):
                out[line] = k
                line += 1
            elif line and row[:1] == " ":
                line += 1
    return out


def run_expert_episode(env, task: Task, actions: list[str]) -> tuple[list[str], list[str]]:
    """Play scripted actions through a real environment: (observations, actions) texts.

    ``observations[k]`` precedes ``actions[k]``; the episode stops when the env says done.
    """
    observations = [env.reset(task)]
    played = []
    for action in actions:
        observation, done = env.step(action)
        played.append(action)
        if done:
            break
        observations.append(observation)
    return observations[: len(played)], played
