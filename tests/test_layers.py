"""The layers of src/editcredit (docs/design.md, "Layout"), checked on the import statements of
its modules (top-level or inside functions; ``from editcredit import x`` included).

Every package and top-level module sits in one layer of :data:`LAYERS`, listed from the bottom:
a module imports only from its own package and from layers below its own, so no two packages
import each other, directly or round a longer loop. Shared I/O (``io``: hashing, result files
with their provenance, volatile sidecars, receipts) is below everything and imports nothing
else of editcredit but the package's version. The task records (``data``) are below the sandbox
that runs them and the grader that judges them; the suite builders that run both (``suites``)
are above the grader. :data:`FORBIDDEN` names the directions of the design that matter most on
their own: sandbox observes and grading judges without knowing the agent, the policy or the
trainer; agent uses grading and policy, never the other way; rl and evaluation use agent; stats
and report read result files only; data depends on nothing trained, run or judged.

Guest code is no part of the library: the minibugs pool (project sources the tasks are made
of) and the sandbox's guest files (run inside the sandbox) are not checked.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "editcredit"
ROOT = "editcredit"  # the package itself: its __init__ holds the version alone
GUEST = ("data/minibugs/pool/", "sandbox/guest/")

LAYERS: list[tuple[str, set[str]]] = [
    ("the package's version", {ROOT}),
    ("shared I/O: hashes, result files with provenance, sidecars, receipts", {"io"}),
    (
        "names and the config: arms and reasons, the schema, progress bars",
        {"records", "config", "progress"},
    ),
    ("paths and the typed settings", {"layout", "settings"}),
    ("task records and job records", {"data", "job_settings", "job_records"}),
    ("what runs beneath a job", {"sandbox", "storage", "protocol", "workflow", "stats"}),
    ("checks and tables of results", {"audit", "report"}),
    ("the judge and the model", {"grading", "policy"}),
    ("built on the judge: suite builders, stored-report replay", {"suites", "replay"}),
    ("the agent and the conformance suite", {"agent", "conformance"}),
    ("training, evaluation and the command line", {"rl", "evaluation", "cli"}),
    ("studies over evaluations: stopping, the study plan", {"stopping", "study_plan"}),
    ("one module per workflow rule", {"jobs"}),
]

FORBIDDEN = {
    "io": {
        "records",
        "config",
        "progress",
        "layout",
        "settings",
        "data",
        "job_settings",
        "job_records",
        "sandbox",
        "storage",
        "protocol",
        "workflow",
        "stats",
        "audit",
        "report",
        "grading",
        "policy",
        "suites",
        "replay",
        "agent",
        "conformance",
        "rl",
        "evaluation",
        "cli",
        "stopping",
        "study_plan",
        "jobs",
    },
    "sandbox": {"grading", "agent", "policy", "rl", "evaluation", "stats", "report"},
    "grading": {"agent", "policy", "rl", "evaluation", "stats", "report", "suites"},
    "data": {
        "agent",
        "policy",
        "rl",
        "evaluation",
        "stats",
        "report",
        "sandbox",
        "grading",
        "suites",
    },
    "policy": {"agent", "rl", "evaluation", "stats", "report"},
    "agent": {"rl", "evaluation", "stats", "report"},
    "stats": {"agent", "policy", "rl", "sandbox", "evaluation", "report"},
    "report": {"agent", "policy", "rl", "sandbox", "evaluation"},
    "replay": {"agent", "policy", "rl", "evaluation", "stats", "report"},
    "settings": {"rl", "agent", "policy", "evaluation", "sandbox", "grading"},
}


def units() -> set[str]:
    """Every package and top-level module of src/editcredit (and the package itself)."""
    found = {ROOT}
    for path in SRC.iterdir():
        if path.is_dir() and any(path.rglob("*.py")):
            found.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.stem)
    return found


def unit_of(module: str) -> str:
    """The package or top-level module of a dotted name below editcredit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def imported_units(path: Path) -> set[str]:
    """The editcredit packages and top-level modules a module imports (top-level or inside
    functions); ``from editcredit import layout`` imports ``layout``, ``from editcredit import
    __version__`` the package itself."""
    found = set()
    known = units()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {unit_of(a.name) for a in node.names if a.name.split(".")[0] == ROOT}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == ROOT:
                found |= {a.name if a.name in known else ROOT for a in node.names}
            elif node.module.split(".")[0] == ROOT:
                found.add(unit_of(node.module))
    return found


def imported_packages(path: Path) -> set[str]:
    """The editcredit subpackages a module imports (top-level or inside functions)."""
    return imported_units(path) - {ROOT}


def library_modules(unit: str) -> list[Path]:
    """The library modules of a package or top-level module (guest code left out)."""
    if unit == ROOT:
        return [SRC / "__init__.py"]
    if (SRC / f"{unit}.py").is_file():
        return [SRC / f"{unit}.py"]
    return [
        p
        for p in sorted((SRC / unit).rglob("*.py"))
        if not any(g in p.relative_to(SRC).as_posix() for g in GUEST)
    ]


def import_graph() -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> the modules of the first that import the second."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for unit in sorted(units()):
        for path in library_modules(unit):
            for used in sorted(imported_units(path) - {unit}):
                graph[unit][used].append(path.relative_to(SRC.parent).as_posix())
    return graph


def layer_of() -> dict[str, int]:
    return {unit: i for i, (_, members) in enumerate(LAYERS) for unit in members}


def test_every_package_and_module_has_one_layer():
    placed = [unit for _, members in LAYERS for unit in members]
    assert len(placed) == len(set(placed)), "a unit in two layers"
    assert set(placed) == units(), (
        f"without a layer: {sorted(units() - set(placed))}; "
        f"gone from src/editcredit: {sorted(set(placed) - units())}"
    )


def test_every_package_is_a_regular_package():
    """setuptools' package finder installs only directories with an ``__init__.py``: a package
    without one works in the editable checkout and is missing from a built wheel."""
    missing = [
        path.parent.relative_to(SRC.parent).as_posix()
        for path in sorted(SRC.rglob("*.py"))
        if "minibugs/pool" not in path.as_posix()
        and "sandbox/guest" not in path.as_posix()
        and not (path.parent / "__init__.py").exists()
    ]
    assert not missing, sorted(set(missing))


def test_every_import_goes_down_the_layers():
    level = layer_of()
    wrong = [
        f"{module} imports editcredit.{used} (layer {level[used]}, not below {level[unit]})"
        for unit, uses in import_graph().items()
        for used, modules in uses.items()
        if level[used] >= level[unit]
        for module in modules
    ]
    assert not wrong, "\n".join(wrong)


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_package_imports_itself_round_a_loop():
    graph = import_graph()
    loops = cycles(graph)
    detail = [
        f"{a} -> {b}: {', '.join(graph[a][b])}"
        for loop in loops
        for a in loop
        for b in loop
        if b in graph.get(a, {})
    ]
    assert not loops, f"import cycles {loops}:\n" + "\n".join(detail)


def test_the_loop_check_sees_a_loop():
    graph = {"a": {"b": ["a.py"]}, "b": {"c": ["b.py"]}, "c": {"a": ["c.py"]}, "d": {"a": []}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_function_level_and_package_imports_count(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from editcredit import layout, __version__\n"
        "def f():\n    import editcredit.rl.config\n    from editcredit.io.hashing import x\n"
    )
    assert imported_units(module) == {"layout", ROOT, "rl", "io"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_follow_the_design(package):
    wrong = []
    for path in library_modules(package):
        for used in sorted(imported_packages(path) & FORBIDDEN[package]):
            wrong.append(f"{path.relative_to(SRC.parent)} imports editcredit.{used}")
    assert not wrong, "\n".join(wrong)
