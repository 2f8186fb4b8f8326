"""The histories of the image suite's three repositories (``editcredit.suites.image``).

Each history has good commits, then the commit that introduces the bug (the base commit of the
task), then the fix. ``textkit`` and ``shapes`` fix with a new regression test (SWE-bench's
``test_patch``); ``numkit``'s bug breaks an existing test and its fix changes no test file.
"""

from __future__ import annotations

from editcredit.suites.image import Commit, RepoSpec

_TEXTKIT_V1 = '''"""Text helpers."""

import re


def slugify(text):
    """Lower-case words of ``text`` joined by single dashes."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
'''
_TEXTKIT_V2 = (
    _TEXTKIT_V1
    + '''

def word_count(text):
    """Number of whitespace-separated words."""
    return len(text.split())
'''
)
_TEXTKIT_BUG = _TEXTKIT_V2.replace(
    """    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)""",
    """    out = []
    for ch in text.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out)""",
).replace("import re\n\n\n", "")
_TEXTKIT_FIX = _TEXTKIT_BUG.replace('return "".join(out)', 'return "".join(out).rstrip("-")')
_TEXTKIT_TESTS = """from textkit.core import slugify


def test_slugify_words():
    assert slugify("Hello World") == "hello-world"


def test_slugify_digits():
    assert slugify("Route 66") == "route-66"
"""
_TEXTKIT_TESTS_2 = (
    _TEXTKIT_TESTS.replace("import slugify", "import slugify, word_count")
    + """

def test_word_count():
    assert word_count("a b  c") == 3
"""
)
_TEXTKIT_TESTS_FIX = (
    _TEXTKIT_TESTS_2
    + """

def test_slugify_trailing_punctuation():
    assert slugify("Hello World!") == "hello-world"
"""
)

_NUMKIT_V1 = '''"""Small statistics."""


def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    return sum(values) / len(values)
'''
_NUMKIT_V2 = (
    _NUMKIT_V1
    + '''

def median(values):
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
'''
)
_NUMKIT_BUG = _NUMKIT_V2.replace(
    "return (ordered[mid - 1] + ordered[mid]) / 2", "return (ordered[mid] + ordered[mid + 1]) / 2"
).replace("    mid = len(ordered) // 2\n", "    mid = len(ordered) // 2  # upper middle\n")
_NUMKIT_FIX = _NUMKIT_BUG.replace(
    "return (ordered[mid] + ordered[mid + 1]) / 2", "return (ordered[mid - 1] + ordered[mid]) / 2"
)
_NUMKIT_TESTS = """from numkit.stats import mean


def test_mean():
    assert mean([1, 2, 3, 6]) == 3
"""
_NUMKIT_TESTS_2 = (
    _NUMKIT_TESTS.replace("import mean", "import mean, median")
    + """

def test_median_odd():
    assert median([5, 1, 3]) == 3


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
"""
)

_SHAPES_V1 = '''"""Rectangles."""


class Rect:
    def __init__(self, width, height):
        self.width = width
        self.height = height

    def area(self):
        return self.width * self.height

    def perimeter(self):
        return 2 * (self.width + self.height)
'''
_SHAPES_V2 = (
    _SHAPES_V1
    + """
    def scaled(self, factor):
        return Rect(self.width * factor, self.height * factor)
"""
)
_SHAPES_BUG = _SHAPES_V2.replace(
    "    def __init__(self, width, height):\n",
    "    def __init__(self, width, height):\n"
    "        if width <= 0 or height <= 0:\n"
    '            raise ValueError("sizes must not be negative")\n',
)
_SHAPES_FIX = _SHAPES_BUG.replace("width <= 0 or height <= 0", "width < 0 or height < 0")
_SHAPES_TESTS = """from shapes.geometry import Rect


def test_area():
    assert Rect(2, 3).area() == 6


def test_perimeter():
    assert Rect(2, 3).perimeter() == 10
"""
_SHAPES_TESTS_2 = (
    _SHAPES_TESTS
    + """

def test_scaled():
    assert Rect(2, 3).scaled(2).area() == 24
"""
)
_SHAPES_TESTS_BUG = (
    "import pytest\n"
    + _SHAPES_TESTS_2
    + """

def test_negative_rejected():
    with pytest.raises(ValueError):
        Rect(-1, 2)
"""
)
_SHAPES_TESTS_FIX = (
    _SHAPES_TESTS_BUG
    + """

def test_zero_size_allowed():
    assert Rect(0, 3).area() == 0
"""
)

REPOS = (
    RepoSpec(
        name="textkit",
        number=4,
        problem=(
            "slugify('Hello World!') returns 'hello-world-', expected 'hello-world': "
            "punctuation at the end of the text leaves a separator at the end of the slug."
        ),
        history=(
            Commit(
                "Add slugify",
                {
                    "textkit/__init__.py": "",
                    "textkit/core.py": _TEXTKIT_V1,
                    "tests/__init__.py": "",
                    "tests/test_core.py": _TEXTKIT_TESTS,
                    "README.md": "# textkit\n\nSmall text helpers.\n",
                },
            ),
            Commit(
                "Add word_count",
                {"textkit/core.py": _TEXTKIT_V2, "tests/test_core.py": _TEXTKIT_TESTS_2},
            ),
            Commit(
                "Build slugify in one pass without regular expressions",
                {"textkit/core.py": _TEXTKIT_BUG},
            ),
        ),
        fix=Commit(
            "Strip the trailing separator in slugify",
            {"textkit/core.py": _TEXTKIT_FIX, "tests/test_core.py": _TEXTKIT_TESTS_FIX},
        ),
        fail_to_pass=("tests/test_core.py::test_slugify_trailing_punctuation",),
        pass_to_pass=(
            "tests/test_core.py::test_slugify_words",
            "tests/test_core.py::test_slugify_digits",
            "tests/test_core.py::test_word_count",
        ),
    ),
    RepoSpec(
        name="numkit",
        number=4,
        problem="median([4, 1, 3, 2]) returns 3.5, expected 2.5 (the mean of the middle values).",
        history=(
            Commit(
                "Add mean",
                {
                    "numkit/__init__.py": "",
                    "numkit/stats.py": _NUMKIT_V1,
                    "tests/__init__.py": "",
                    "tests/test_stats.py": _NUMKIT_TESTS,
                },
            ),
            Commit(
                "Add median",
                {"numkit/stats.py": _NUMKIT_V2, "tests/test_stats.py": _NUMKIT_TESTS_2},
            ),
            Commit("Name the middle index", {"numkit/stats.py": _NUMKIT_BUG}),
        ),
        fix=Commit("Use the two middle values in median", {"numkit/stats.py": _NUMKIT_FIX}),
        fail_to_pass=("tests/test_stats.py::test_median_even",),
        pass_to_pass=("tests/test_stats.py::test_mean", "tests/test_stats.py::test_median_odd"),
        test_paths=("tests/test_stats.py",),
    ),
    RepoSpec(
        name="shapes",
        number=4,
        problem=(
            "Rect(0, 3) raises ValueError('sizes must not be negative'); a zero size is not "
            "negative and its area should be 0."
        ),
        history=(
            Commit(
                "Add Rect",
                {
                    "shapes/__init__.py": "",
                    "shapes/geometry.py": _SHAPES_V1,
                    "tests/__init__.py": "",
                    "tests/test_geometry.py": _SHAPES_TESTS,
                },
            ),
            Commit(
                "Add Rect.scaled",
                {"shapes/geometry.py": _SHAPES_V2, "tests/test_geometry.py": _SHAPES_TESTS_2},
            ),
            Commit(
                "Reject negative sizes",
                {"shapes/geometry.py": _SHAPES_BUG, "tests/test_geometry.py": _SHAPES_TESTS_BUG},
            ),
        ),
        fix=Commit(
            "Allow zero sizes in Rect",
            {"shapes/geometry.py": _SHAPES_FIX, "tests/test_geometry.py": _SHAPES_TESTS_FIX},
        ),
        fail_to_pass=("tests/test_geometry.py::test_zero_size_allowed",),
        pass_to_pass=(
            "tests/test_geometry.py::test_area",
            "tests/test_geometry.py::test_perimeter",
            "tests/test_geometry.py::test_scaled",
            "tests/test_geometry.py::test_negative_rejected",
        ),
    ),
)
