"""Problem statements derived from a failing FAIL_TO_PASS test: call, expected, actual.

Never from the fix: the statement is built from the test's source and the observed failure.
"""

from __future__ import annotations

import ast


def _test_function(test_source: str, nodeid: str) -> ast.FunctionDef | None:
    parts = nodeid.split("::")[1:]
    name = parts[-1].split("[")[0]
    scope: list[ast.stmt] = ast.parse(test_source).body
    for part in parts[:-1]:
        cls = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        scope = cls.body
    return next((n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name), None)


def call_and_expected(test_source: str, nodeid: str) -> tuple[str, str] | None:
    """The (call, expected) texts of the test's ``assert <call> == <expected>``."""
    func = _test_function(test_source, nodeid)
    if func is None:
        return None
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.Compare)
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Eq)
        ):
            call = ast.get_source_segment(test_source, node.test.left)
            expected = ast.get_source_segment(test_source, node.test.comparators[0])
            if call and expected:
                return call, expected
    return None


def actual_from_message(message: str) -> str:
    """The actual value from an assertion message such as ``assert 5 == 3``."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    if first.startswith("assert "):
        try:
            expr = ast.parse(first[len("assert ") :], mode="eval").body
        except SyntaxError:
            return first
        if isinstance(expr, ast.Compare):
            return ast.unparse(expr.left)
        return first
    if first.startswith("Failed: DID NOT RAISE"):
        return "no exception (" + first.removeprefix("Failed: ") + ")"
    return f"raises {first}" if first else "(no message)"


def problem_statement(
    module_path: str, function: str, nodeid: str, test_source: str, message: str
) -> str:
    """Describe the misbehaviour seen by one failing test, in the reporter's words."""
    head = f"`{function}` in `{module_path}` does not behave as its tests expect.\n\n"
    head += f"Failing test: `{nodeid}`\n"
    pair = call_and_expected(test_source, nodeid)
    actual = actual_from_message(message)
    if pair is None:
        return head + f"    failure: {message.strip().splitlines()[0] if message else '?'}\n"
    call, expected = pair
    return head + f"    call:     {call}\n    expected: {expected}\n    actual:   {actual}\n"
