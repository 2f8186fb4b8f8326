"""The image suite's repositories whose tests do not run under pytest (issue 17).

Each is written by the project (no third-party code: the images have no network):

- ``unitkit``: plain ``unittest`` tests, run by ``python3 -m unittest tests/test_ranges.py``;
- ``djangoish``: a Django-style layout: apps under ``tests/`` each with a ``tests.py``, and a
  ``tests/runtests.py`` that builds a unittest suite from dotted labels and runs it with its own
  result class (as Django's ``DiscoverRunner`` does), exiting non-zero on failure;
- ``minisympy``: a SymPy-style layout: a package named ``sympy`` whose
  ``sympy/utilities/runtests.py`` holds a ``SymPyTests`` runner and a ``PyTestReporter``
  modelled on SymPy's (the same method names and call order), driven by ``bin/test``.

Each history has good commits, then the commit that introduces the bug (the base commit), then
the fix, which adds a regression test (the task's ``test_patch``).
"""

from __future__ import annotations

from editcredit.suites.image import Commit, RepoSpec

# -- unitkit: plain unittest ---------------------------------------------------------------------
_UNITKIT_V1 = '''"""Integer ranges."""


def clamp(value, low, high):
    """``value`` limited to ``[low, high]``."""
    return max(low, min(value, high))
'''
_UNITKIT_V2 = (
    _UNITKIT_V1
    + '''

def overlap(a, b):
    """Length of the overlap of the half-open ranges ``a`` and ``b`` (pairs)."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))
'''
)
_UNITKIT_BUG = _UNITKIT_V2.replace(
    "    return max(low, min(value, high))",
    "    if value < low:\n        return low\n    if value > high and low < high:\n"
    "        return high\n    return value",
)
_UNITKIT_FIX = _UNITKIT_BUG.replace("    if value > high and low < high:", "    if value > high:")
_UNITKIT_TESTS = """import unittest

from unitkit.ranges import clamp


class ClampTests(unittest.TestCase):
    def test_inside(self):
        self.assertEqual(clamp(5, 0, 10), 5)

    def test_outside(self):
        for value, want in ((-3, 0), (12, 10)):
            with self.subTest(value=value):
                self.assertEqual(clamp(value, 0, 10), want)
"""
_UNITKIT_TESTS_2 = (
    _UNITKIT_TESTS.replace("import clamp", "import clamp, overlap")
    + """

class OverlapTests(unittest.TestCase):
    def test_overlap(self):
        self.assertEqual(overlap((0, 5), (3, 9)), 2)

    def test_disjoint(self):
        self.assertEqual(overlap((0, 2), (5, 9)), 0)
"""
)
_UNITKIT_TESTS_FIX = _UNITKIT_TESTS_2.replace(
    """                self.assertEqual(clamp(value, 0, 10), want)
""",
    """                self.assertEqual(clamp(value, 0, 10), want)

    def test_single_point(self):
        self.assertEqual(clamp(7, 4, 4), 4)
        self.assertEqual(clamp(4, 4, 4), 4)
""",
)

# -- djangoish: tests/runtests.py with labels ------------------------------------------------------
_RUNTESTS = '''#!/usr/bin/env python3
"""Run the test suite: ``./tests/runtests.py [--verbosity N] [--parallel N] [label ...]``.

Labels are dotted modules, classes or methods relative to this directory (``text.tests``,
``text.tests.SlugTests.test_words``), as Django's runtests.py takes them.
"""

import argparse
import os
import sys
import unittest

RUNTESTS_DIR = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(RUNTESTS_DIR))
sys.path.insert(0, RUNTESTS_DIR)


class DjangoishResult(unittest.TextTestResult):
    """The runner's own result: counts outcomes, prints them like Django's verbose run."""

    def addSuccess(self, test):
        self.stream.write(f"{test} ... ok\\n")
        self.testsRun_ok = getattr(self, "testsRun_ok", 0) + 1

    def addFailure(self, test, err):
        self.failures.append((test, self._exc_info_to_string(err, test)))
        self.stream.write(f"{test} ... FAIL\\n")

    def addError(self, test, err):
        self.errors.append((test, self._exc_info_to_string(err, test)))
        self.stream.write(f"{test} ... ERROR\\n")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("labels", nargs="*")
    parser.add_argument("--verbosity", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--settings", default="")
    args = parser.parse_args(argv)
    loader = unittest.TestLoader()
    if args.labels:
        suite = loader.loadTestsFromNames(args.labels)
    else:
        suite = loader.discover(RUNTESTS_DIR, pattern="tests.py", top_level_dir=RUNTESTS_DIR)
    runner = unittest.TextTestRunner(verbosity=0, resultclass=DjangoishResult)
    result = runner.run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
'''
_DJANGOISH_V1 = '''"""Text utilities for templates."""

import re


def slugify(value):
    """Lower-case ASCII words joined by hyphens."""
    value = re.sub(r"[^\\w\\s-]", "", value).strip().lower()
    return re.sub(r"[-\\s]+", "-", value)
'''
_DJANGOISH_V2 = (
    _DJANGOISH_V1
    + '''

def truncate_words(value, count):
    """The first ``count`` words of ``value``, with an ellipsis when some were cut."""
    words = value.split()
    if len(words) <= count:
        return " ".join(words)
    return " ".join(words[:count]) + " ..."
'''
)
_DJANGOISH_BUG = _DJANGOISH_V2.replace(
    "    if len(words) <= count:", "    if len(words) < count:"
).replace(
    'return " ".join(words[:count]) + " ..."',
    'return " ".join(words[:count]) + " ..."  # one pass, no copy',
)
_DJANGOISH_FIX = _DJANGOISH_BUG.replace("    if len(words) < count:", "    if len(words) <= count:")
_DJANGOISH_TESTS = """import unittest

from djangoish.text import slugify


class SlugTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cases = {"Hello World": "hello-world", "  a  b ": "a-b"}

    def test_words(self):
        for value, want in self.cases.items():
            with self.subTest(value=value):
                self.assertEqual(slugify(value), want)

    def test_punctuation(self):
        self.assertEqual(slugify("Hi, there!"), "hi-there")
"""
_DJANGOISH_TESTS_2 = (
    _DJANGOISH_TESTS.replace("import slugify", "import slugify, truncate_words")
    + """

class TruncateTests(unittest.TestCase):
    def test_cut(self):
        self.assertEqual(truncate_words("a b c d", 2), "a b ...")

    def test_short(self):
        self.assertEqual(truncate_words("a b", 5), "a b")

    @unittest.skipIf(True, "unicode slugs are not supported")
    def test_unicode(self):
        self.assertEqual(slugify("Ünïcode"), "unicode")
"""
)
_DJANGOISH_TESTS_FIX = _DJANGOISH_TESTS_2.replace(
    """    def test_short(self):""",
    """    def test_exact_length(self):
        self.assertEqual(truncate_words("a b c", 3), "a b c")

    def test_short(self):""",
)

# -- minisympy: bin/test and a SymPy-style reporter --------------------------------------------
_BIN_TEST = '''#!/usr/bin/env python3
"""Run the test suite: ``bin/test [-C] [--verbose] [-k KEYWORD ...] [path ...]``."""

import argparse
import os
import sys

sympy_top = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, sympy_top)

parser = argparse.ArgumentParser()
parser.add_argument("paths", nargs="*")
parser.add_argument("-k", dest="kw", nargs="*", default=[])
parser.add_argument("-C", "--no-cache", dest="cache", action="store_false")
parser.add_argument("-v", "--verbose", action="store_true")
args = parser.parse_args()

import sympy  # noqa: E402

ok = sympy.test(*args.paths, kw=args.kw, verbose=args.verbose)
sys.exit(not ok)
'''
_SYMPY_INIT = '''"""A tiny symbolic package laid out as SymPy is (the project's own code)."""


def test(*paths, **kwargs):
    """Run the tests under ``paths`` (files or directories); True when all passed."""
    from sympy.utilities.runtests import test as run

    return run(*paths, **kwargs)
'''
_RUNTESTS_SYMPY = '''"""A test runner modelled on SymPy's ``sympy/utilities/runtests.py``.

``SymPyTests`` executes each test file, collects its ``test_*`` functions in line order and
reports every outcome to its reporter: ``entering_test``, then one of ``test_pass``,
``test_fail`` (an AssertionError), ``test_exception`` (any other exception), ``test_skip``,
``test_xfail``, ``test_xpass``; ``import_error`` for a file that cannot be executed.
"""

import inspect
import os
import sys
import time


class Skipped(Exception):
    pass


class XFail(Exception):
    pass


class XPass(Exception):
    pass


def SKIP(reason):
    def wrapper(func):
        def skipped():
            raise Skipped(reason)

        skipped.__name__ = func.__name__
        return skipped

    return wrapper


def XFAIL(func):
    def wrapper():
        try:
            func()
        except Exception as exc:
            message = str(exc)
            if message != "Timeout":
                raise XFail(func.__name__)
            raise Skipped("Timeout")
        raise XPass(func.__name__)

    wrapper.__name__ = func.__name__
    return wrapper


class Reporter:
    pass


class PyTestReporter(Reporter):
    def __init__(self, verbose=False):
        self._verbose = verbose
        self._passed = 0
        self._skipped = 0
        self._xfailed = 0
        self._xpassed = []
        self._failed = []
        self._exceptions = []
        self._active_file = ""
        self._active_f = None

    def write(self, text):
        sys.stdout.write(text)
        sys.stdout.flush()

    def start(self):
        self._t_start = time.time()
        self.write("=" * 29 + " test process starts " + "=" * 30 + "\\n")

    def finish(self):
        for filename, f, _exc in self._failed + self._exceptions:
            name = f.__name__ if f is not None else "(import)"
            self.write(f"FAILED: {filename}:{name}\\n")
        self.write(
            f"tests finished: {self._passed} passed, {len(self._failed)} failed, "
            f"{self._skipped} skipped, {self._xfailed} expected to fail, "
            f"{len(self._xpassed)} expected to fail but passed, "
            f"{len(self._exceptions)} exceptions\\n"
        )
        return not (self._failed or self._exceptions or self._xpassed)

    def entering_filename(self, filename, n):
        self._active_file = filename
        self.write(f"{filename}[{n}] ")

    def leaving_filename(self):
        self.write("\\n")

    def entering_test(self, f):
        self._active_f = f
        if self._verbose:
            self.write("\\n" + f.__name__ + " ")

    def test_pass(self, char="."):
        self._passed += 1
        self.write("ok" if self._verbose else char)

    def test_skip(self, v=None):
        self._skipped += 1
        self.write("s")

    def test_xfail(self):
        self._xfailed += 1
        self.write("f")

    def test_xpass(self, v):
        self._xpassed.append((self._active_file, str(v)))
        self.write("X")

    def test_fail(self, exc_info):
        self._failed.append((self._active_file, self._active_f, exc_info))
        self.write("F")

    def test_exception(self, exc_info):
        self._exceptions.append((self._active_file, self._active_f, exc_info))
        self.write("E")

    def import_error(self, filename, exc_info):
        self._exceptions.append((filename, None, exc_info))
        self.write(f"{filename}[?]   Failed to import")


class SymPyTests:
    def __init__(self, reporter, kw="", post_mortem=False, seed=None):
        self._reporter = reporter
        self._kw = kw
        self._testfiles = []
        self._root_dir = os.getcwd()

    def test(self, sort=False, timeout=False, slow=False, enhance_asserts=False):
        if sort:
            self._testfiles.sort()
        self._reporter.start()
        for f in self._testfiles:
            self.test_file(f)
        return self._reporter.finish()

    def matches(self, x):
        if not isinstance(x, str):
            x = x.__name__
        if not self._kw:
            return True
        return any(kw.lower() in x.lower() for kw in self._kw)

    def test_file(self, filename, sort=True, timeout=False, slow=False, enhance_asserts=False):
        gl = {"__file__": filename}
        try:
            with open(filename, encoding="utf-8") as fh:
                code = compile(fh.read(), filename, "exec")
            exec(code, gl)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception:
            self._reporter.import_error(filename, sys.exc_info())
            return
        funcs = [
            gl[name]
            for name in list(gl)
            if name.startswith("test_") and inspect.isfunction(gl[name])
        ]
        if sort:
            funcs.sort(key=lambda f: inspect.getsourcelines(f)[1])
        funcs = [f for f in funcs if self.matches(f)]
        if not funcs:
            return
        self._reporter.entering_filename(filename, len(funcs))
        for f in funcs:
            self._reporter.entering_test(f)
            try:
                f()
            except KeyboardInterrupt:
                raise
            except Exception:
                t, v, tr = sys.exc_info()
                if t is AssertionError:
                    self._reporter.test_fail((t, v, tr))
                elif t.__name__ == "Skipped":
                    self._reporter.test_skip(v)
                elif t.__name__ == "XFail":
                    self._reporter.test_xfail()
                elif t.__name__ == "XPass":
                    self._reporter.test_xpass(v)
                else:
                    self._reporter.test_exception((t, v, tr))
            else:
                self._reporter.test_pass()
        self._reporter.leaving_filename()


def _files(path):
    if os.path.isdir(path):
        out = []
        for root, _dirs, names in sorted(os.walk(path)):
            out += [os.path.join(root, n) for n in sorted(names) if n.startswith("test_")]
        return [p for p in out if p.endswith(".py")]
    return [path]


def test(*paths, kw=(), verbose=False, **kwargs):
    reporter = PyTestReporter(verbose=verbose)
    tests = SymPyTests(reporter, kw)
    for path in paths or ["sympy"]:
        tests._testfiles.extend(_files(path))
    return tests.test()
'''
_MINISYMPY_V1 = '''"""Integer number theory."""


def igcd(a, b):
    """Greatest common divisor of two integers (never negative)."""
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a
'''
_MINISYMPY_V2 = (
    _MINISYMPY_V1
    + '''

def ilcm(a, b):
    """Least common multiple of two integers (0 when either is 0)."""
    if a == 0 or b == 0:
        return 0
    return abs(a * b) // igcd(a, b)
'''
)
_MINISYMPY_BUG = _MINISYMPY_V2.replace("    a, b = abs(a), abs(b)\n    while b:", "    while b:")
_MINISYMPY_FIX = _MINISYMPY_V2
_MINISYMPY_TESTS = """from sympy.core.numbers import igcd
from sympy.utilities.runtests import XFAIL


def test_igcd():
    assert igcd(12, 18) == 6
    assert igcd(7, 0) == 7


@XFAIL
def test_igcd_floats():
    assert igcd(1.5, 3) == 1.5 and False
"""
_MINISYMPY_TESTS_2 = (
    _MINISYMPY_TESTS.replace("import igcd", "import igcd, ilcm")
    + """

def test_ilcm():
    assert ilcm(4, 6) == 12
    assert ilcm(0, 5) == 0
"""
)
_MINISYMPY_TESTS_FIX = (
    _MINISYMPY_TESTS_2
    + """

def test_igcd_negative():
    assert igcd(-12, 18) == 6
    assert igcd(12, -18) == 6
"""
)

RUNNER_REPOS = (
    RepoSpec(
        name="unitkit",
        number=3,
        problem="clamp(7, 4, 4) returns 7; with low == high the only value in range is 4.",
        history=(
            Commit(
                "Add clamp",
                {
                    "unitkit/__init__.py": "",
                    "unitkit/ranges.py": _UNITKIT_V1,
                    "tests/__init__.py": "",
                    "tests/test_ranges.py": _UNITKIT_TESTS,
                },
            ),
            Commit(
                "Add overlap",
                {"unitkit/ranges.py": _UNITKIT_V2, "tests/test_ranges.py": _UNITKIT_TESTS_2},
            ),
            Commit("Spell clamp's branches out", {"unitkit/ranges.py": _UNITKIT_BUG}),
        ),
        fix=Commit(
            "Allow a single-point range in clamp",
            {"unitkit/ranges.py": _UNITKIT_FIX, "tests/test_ranges.py": _UNITKIT_TESTS_FIX},
        ),
        fail_to_pass=("test_single_point (tests.test_ranges.ClampTests)",),
        pass_to_pass=(
            "test_inside (tests.test_ranges.ClampTests)",
            "test_outside (tests.test_ranges.ClampTests)",
            "test_overlap (tests.test_ranges.OverlapTests)",
            "test_disjoint (tests.test_ranges.OverlapTests)",
        ),
        test_runner="unittest",
    ),
    RepoSpec(
        name="djangoish",
        number=3,
        problem=(
            'truncate_words("a b c", 3) returns "a b c ..."; nothing was cut, so there should '
            "be no ellipsis."
        ),
        history=(
            Commit(
                "Add slugify",
                {
                    "djangoish/__init__.py": "",
                    "djangoish/text.py": _DJANGOISH_V1,
                    "tests/runtests.py": _RUNTESTS,
                    "tests/text/__init__.py": "",
                    "tests/text/tests.py": _DJANGOISH_TESTS,
                },
            ),
            Commit(
                "Add truncate_words",
                {"djangoish/text.py": _DJANGOISH_V2, "tests/text/tests.py": _DJANGOISH_TESTS_2},
            ),
            Commit("Return early for short values", {"djangoish/text.py": _DJANGOISH_BUG}),
        ),
        fix=Commit(
            "No ellipsis when nothing is cut",
            {"djangoish/text.py": _DJANGOISH_FIX, "tests/text/tests.py": _DJANGOISH_TESTS_FIX},
        ),
        fail_to_pass=("test_exact_length (text.tests.TruncateTests)",),
        pass_to_pass=(
            "test_words (text.tests.SlugTests)",
            "test_punctuation (text.tests.SlugTests)",
            "test_cut (text.tests.TruncateTests)",
            "test_short (text.tests.TruncateTests)",
        ),
        test_runner="django",
        test_command=("./tests/runtests.py", "--verbosity", "2", "--parallel", "1"),
    ),
    RepoSpec(
        name="minisympy",
        number=3,
        problem="igcd(12, -18) returns -6; the greatest common divisor is never negative.",
        history=(
            Commit(
                "Add igcd and the test runner",
                {
                    "bin/test": _BIN_TEST,
                    "sympy/__init__.py": _SYMPY_INIT,
                    "sympy/utilities/__init__.py": "",
                    "sympy/utilities/runtests.py": _RUNTESTS_SYMPY,
                    "sympy/core/__init__.py": "",
                    "sympy/core/numbers.py": _MINISYMPY_V1,
                    "sympy/core/tests/__init__.py": "",
                    "sympy/core/tests/test_numbers.py": _MINISYMPY_TESTS,
                },
            ),
            Commit(
                "Add ilcm",
                {
                    "sympy/core/numbers.py": _MINISYMPY_V2,
                    "sympy/core/tests/test_numbers.py": _MINISYMPY_TESTS_2,
                },
            ),
            Commit("Drop a redundant abs in igcd", {"sympy/core/numbers.py": _MINISYMPY_BUG}),
        ),
        fix=Commit(
            "igcd of negative arguments is positive",
            {
                "sympy/core/numbers.py": _MINISYMPY_FIX,
                "sympy/core/tests/test_numbers.py": _MINISYMPY_TESTS_FIX,
            },
        ),
        fail_to_pass=("test_igcd_negative",),
        pass_to_pass=("test_igcd", "test_ilcm"),
        test_runner="sympy",
        test_command=("bin/test", "-C", "--verbose"),
    ),
)
