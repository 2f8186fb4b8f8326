"""The procedural pool: generated modules whose tests pass, functions that stand alone, names
the hand-written pool never uses, and a suite built from them in the real sandbox whose every
task fails only its own function's tests."""

from __future__ import annotations

import ast
import json
import sys
import types

import pytest
from taskfactory import CONFIG

from editcredit.data.freeze import load_tasks
from editcredit.data.minibugs.pool_files import load_pool
from editcredit.data.mutations import top_level_functions
from editcredit.data.procedural import SHAPES, procedural_module, procedural_pool
from editcredit.suites.build import build_suite


def run_module_tests(module) -> dict[str, bool]:
    """Import the module's source under its name and run every test function in-process."""
    mod = types.ModuleType(module.name)
    exec(compile(module.source, module.path, "exec"), mod.__dict__)
    sys.modules[module.name] = mod
    try:
        scope: dict = {}
        exec(compile(module.test_source, module.test_path, "exec"), scope)
        outcome = {}
        for name, fn in scope.items():
            if name.startswith("test_") and callable(fn):
                try:
                    fn()
                    outcome[name] = True
                except AssertionError:
                    outcome[name] = False
        return outcome
    finally:
        del sys.modules[module.name]


def test_generation_is_a_function_of_seed_and_index():
    assert procedural_module(3, 1, 4) == procedural_module(3, 1, 4)
    assert procedural_module(3, 1, 4).source != procedural_module(4, 1, 4).source
    assert procedural_module(3, 1, 4).source != procedural_module(3, 2, 4).source


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_generated_test_passes_on_the_generated_source(seed):
    for module in procedural_pool(seed, 3, 6):
        outcome = run_module_tests(module)
        assert len(outcome) == 6 * 5
        assert all(outcome.values()), [k for k, ok in outcome.items() if not ok]


def test_every_shape_is_drawn_and_functions_stand_alone():
    pool = procedural_pool(11, 20, 8)
    docs = set()
    for module in pool:
        tree = ast.parse(module.source)
        names = set(top_level_functions(module.source))
        assert len(names) == 8
        for node in tree.body[1:]:  # after the module docstring
            docs.add(ast.get_docstring(node))
            called = {
                c.func.id
                for c in ast.walk(node)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
            }
            assert not called & names, f"{module.name}.{node.name} calls {called & names}"
    assert len(docs) == len(SHAPES)  # one docstring per shape: every shape occurs


def test_names_never_collide_with_the_hand_written_pool():
    written = {f for m in load_pool() for f in top_level_functions(m.source)}
    pool = procedural_pool(5, 30, 8)
    generated = {(m.name, f) for m in pool for f in top_level_functions(m.source)}
    assert len(generated) == 30 * 8
    assert len({f for _, f in generated}) > 200  # names rarely recur across modules either
    assert not written & {f for _, f in generated}


def test_a_planted_bug_fails_only_its_own_functions_tests():
    module = procedural_module(2, 0, 5)
    from editcredit.data.mutations import apply_mutation, enumerate_mutations

    function = top_level_functions(module.source)[0]
    failing_sets = []
    for mutation in enumerate_mutations(module.source, function)[:12]:
        mutated = module.__class__(
            module.name, apply_mutation(module.source, mutation), module.test_source
        )
        try:
            outcome = run_module_tests(mutated)
        except Exception:  # a mutant that breaks at import time fails every test: not here
            continue
        failed = {name for name, ok in outcome.items() if not ok}
        assert all(name.startswith(f"test_{function}_") for name in failed)
        failing_sets.append(failed)
    assert any(failing_sets)


def test_a_procedural_suite_is_validated_in_the_sandbox(docker_ready, tmp_path):
    cfg = {
        "generator": "procedural",
        "seed": 9,
        "pool_modules": 1,
        "pool_functions": 3,
        "mutants_per_function": 2,
        "timeout_s": 20,
        "validation_timeout_s": 5,
        "modules": [],
        "splits": {"train": 1.0, "dev": 0.0, "holdout": 0.0},
    }
    build_suite("corpus", cfg, CONFIG["sandbox"], tmp_path)
    tasks = load_tasks(tmp_path / "tasks.parquet")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["generator"]["pool_functions"] == 3
    assert tasks, manifest["generator"]["rejected"]
    for task in tasks:
        function = task.meta["seed_function"].split(".", 1)[1]
        assert task.suite == "corpus" and task.instance_id.startswith("corpus__")
        assert task.split == "train"
        assert task.PASS_TO_PASS
        assert all(f"::test_{function}_" in i for i in task.FAIL_TO_PASS)
