"""Dependency directions of docs/design.md ("Layout"): sandbox observes and grading judges without
knowing the agent, the policy or the trainer; agent uses grading and policy, never the other way;
rl and evaluation use agent; stats and report read result files only; data depends on nothing
trained. Checked on the import statements of src/editcredit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "editcredit"

FORBIDDEN = {
    "sandbox": {"grading", "agent", "policy", "rl", "evaluation", "stats", "report"},
    "grading": {"agent", "policy", "rl", "evaluation", "stats", "report"},
    "data": {"agent", "policy", "rl", "evaluation", "stats", "report"},
    "policy": {"agent", "rl", "evaluation", "stats", "report"},
    "agent": {"rl", "evaluation", "stats", "report"},
    "stats": {"agent", "policy", "rl", "sandbox", "evaluation", "report"},
    "report": {"agent", "policy", "rl", "sandbox", "evaluation"},
    "replay": {"agent", "policy", "rl", "evaluation", "stats", "report"},
}


def imported_packages(path: Path) -> set[str]:
    """The editcredit subpackages a module imports (top-level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "editcredit" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_follow_the_design(package):
    wrong = []
    for path in sorted((SRC / package).rglob("*.py")):
        if "minibugs/pool" in path.as_posix() or "sandbox/guest" in path.as_posix():
            continue
        for used in sorted(imported_packages(path) & FORBIDDEN[package]):
            wrong.append(f"{path.relative_to(SRC.parent)} imports editcredit.{used}")
    assert not wrong, "\n".join(wrong)
