"""Real SymPy releases graded through ``bin/test``: 1.13.3 (whose ``sympy.test`` runs pytest,
``sympy.testing.runtests_pytest``) and 1.12 (SymPy's own ``SymPyTests`` runner).

Each image holds the release's sdist (tests included) at ``/testbed``, installed in development
mode (a ``.pth``), with the wheels of mpmath and, for 1.13's ``conftest.py``, hypothesis and its
dependencies (hypothesis's pytest plugin is loaded from its entry point, as SymPy's own run would
load it). The sdists ship no ``bin/test``; the one written here has the interface of SymPy's
(``-C``, ``--verbose``, ``-k``, paths) and calls ``sympy.test``. The task plants a bug in
``rotate_left``; ``test_flatten`` exists in both test files, and the ids that name its file keep
it: a bug planted in ``sympy.strategies.rl.flatten`` flips that file's test only.
"""

from __future__ import annotations

import pytest
from taskfactory import CONFIG, WEIGHTS
from upstreamfactory import build_layout_image, fresh_dir, unpack_sdist, unpack_wheel, write_files

from editcredit.data.task import Task
from editcredit.grading.grader import grade_patch, grade_tree
from editcredit.sandbox.factory import make_sandbox
from editcredit.sandbox.patches import diff_trees

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BIN_TEST = '''#!/usr/bin/env python
"""Run SymPy's tests: bin/test [-C] [--verbose] [-k NAME]... [PATH]..."""
import os
import sys
from optparse import OptionParser

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = OptionParser()
parser.add_option("-v", "--verbose", action="store_true", default=False)
parser.add_option("-k", dest="kw", action="append", default=[])
parser.add_option("-C", "--no-cache", dest="cache", action="store_false", default=True)
options, args = parser.parse_args()
if not options.cache:
    os.environ["SYMPY_USE_CACHE"] = "no"

import sympy

ok = sympy.test(*args, verbose=options.verbose, kw=tuple(options.kw) or None)
sys.exit(0 if ok is True or (ok is not False and int(ok) == 0) else 1)
'''
WHEELS = {
    "1.13.3": ["mpmath==1.3.0", "hypothesis==6.112.0", "attrs==24.2.0", "sortedcontainers==2.4.0"],
    "1.12": ["mpmath==1.3.0"],
}
ITERABLES = "sympy/utilities/iterables.py"
RL = "sympy/strategies/rl.py"
T_IT = "sympy/utilities/tests/test_iterables.py"
T_RL = "sympy/strategies/tests/test_rl.py"
ROTATE = "    y = y % len(x)\n    return x[y:] + x[:y]\n"
ROTATE_BUG = "    y = y % len(x)\n    return x[y:] + x[:y][::-1]\n"
FLATTEN = "            args.extend(arg.args)\n"
FLATTEN_BUG = "            args.extend(arg.args[:1])\n"


def _with(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.fixture(scope="module", params=["1.13.3", "1.12"])
def sympy_release(request, docker_ready, tmp_path_factory):
    """(task, pristine iterables.py, pristine rl.py) of one release."""
    version = request.param
    ctx = tmp_path_factory.mktemp(f"sympy-{version}")
    top = unpack_sdist(f"sympy=={version}", fresh_dir(ctx / "sdist"))
    repo, site = fresh_dir(ctx / "repo"), fresh_dir(ctx / "site")
    for name in ("sympy", "sympy.egg-info"):
        (top / name).rename(repo / name)
    iterables = (repo / ITERABLES).read_text(encoding="utf-8")
    rl = (repo / RL).read_text(encoding="utf-8")
    (repo / ITERABLES).write_text(_with(iterables, ROTATE, ROTATE_BUG), encoding="utf-8")
    write_files(repo, {"bin/test": BIN_TEST})
    (repo / "bin" / "test").chmod(0o755)
    for spec in WHEELS[version]:
        unpack_wheel(spec, site)
    write_files(site, {"sympy-devinstall.pth": "/testbed\n"})
    tag = f"editcredit-layout:sympy-{version}"
    build_layout_image(tag, ctx)
    base = _with(iterables, ROTATE, ROTATE_BUG)
    task = Task(
        instance_id=f"sympy__sympy-{version}",
        repo="sympy/sympy",
        problem_statement="rotate_left([0, 1, 2], 1) returns [1, 2, 0] reversed in part",
        patch=diff_trees({ITERABLES: base}, {ITERABLES: iterables}),
        FAIL_TO_PASS=["test_rotate"],
        PASS_TO_PASS=[f"{T_IT}::test_flatten", "test_group", f"{T_RL}::test_flatten"],
        test_paths=[T_IT, T_RL],
        image=tag,
        suite="sympy-releases",
        test_runner="sympy",
    )
    return task, base, iterables, rl


@pytest.fixture(scope="module")
def box(docker_ready):
    with make_sandbox("docker", CONFIG["sandbox"]) as sandbox:
        yield sandbox


def test_sympy_bin_test_is_observed_and_ids_keep_their_path(sympy_release, box):
    task, base, fixed, rl = sympy_release
    gold = grade_patch(task, task.patch, box, *WEIGHTS)
    assert (gold.outcome, gold.verdict, gold.tampering) == ("verdict", "valid_1", False), (
        gold.reason
    )
    assert {t["status"] for t in gold.tests.values()} == {"passed"}
    items = {i.nodeid for i in gold.sandbox.observations.items}
    assert {f"{T_IT}::test_rotate", f"{T_IT}::test_flatten", f"{T_RL}::test_flatten"} <= items
    assert len(gold.sandbox.sentinel_items) == 2
    empty = grade_tree(task, "", box, *WEIGHTS)
    assert (empty.verdict, empty.tampering) == ("valid_0", False), empty.reason
    assert empty.tests["test_rotate"]["status"] == "failed"
    # a bug in the strategies' flatten: that file's test_flatten flips, not iterables' one
    planted = task.patch + diff_trees({RL: rl}, {RL: _with(rl, FLATTEN, FLATTEN_BUG)})
    report = grade_patch(task, planted, box, *WEIGHTS)
    assert (report.verdict, report.tampering) == ("valid_0", False), report.reason
    failed = {i for i, t in report.tests.items() if t["status"] != "passed"}
    assert failed == {f"{T_RL}::test_flatten"}
