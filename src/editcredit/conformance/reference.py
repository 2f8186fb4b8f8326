"""Reference outcomes from a project's own runner: the independent witness the grader is
checked against. Pure parsers of the runner's own reports (pytest's JUnit XML and terminal
summary, Django's ``-v 2`` lines); statuses use the grader's words (``passed``, ``failed``,
``error``, ``skipped``, ``xfail``, ``xpass``) so the two can be compared id by id.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET


class ReferenceError_(ValueError):
    """A runner's report cannot be read."""


def module_of(path: str) -> str:
    """pytest's dotted name of a test file path (``a/b/test_c.py`` -> ``a.b.test_c``)."""
    return re.sub(r"\.py$", "", path).replace("/", ".")


def junit_nodeid(classname: str, name: str, file: str, test_files: list[str]) -> str:
    """The pytest node id of one JUnit (xunit1) testcase. The collecting module is the
    longest test file whose dotted name prefixes ``classname`` (a test inherited from another
    module is reported with its defining file), else ``file``."""
    candidates = [*test_files, file] if file else list(test_files)
    best = ""
    for path in candidates:
        mod = module_of(path)
        if (classname == mod or classname.startswith(mod + ".")) and len(mod) > len(
            module_of(best)
        ):
            best = path
    if not best:
        raise ReferenceError_(f"testcase {classname}::{name}: no test file matches its class")
    rest = classname[len(module_of(best)) :].lstrip(".")
    parts = [best, *(rest.split(".") if rest else []), name]
    return "::".join(parts)


def junit_statuses(xml_text: str, test_files: list[str], summary: str = "") -> dict[str, str]:
    """Node id -> status from a JUnit XML report (``-o junit_family=xunit1``). Non-strict
    XPASS is a plain pass in JUnit; ``summary`` (pytest's ``-rA`` terminal text) tells it."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ReferenceError_(f"JUnit XML: {exc}") from None
    out: dict[str, str] = {}
    for case in root.iter("testcase"):
        nodeid = junit_nodeid(
            case.get("classname", ""), case.get("name", ""), case.get("file", ""), test_files
        )
        tags = {child.tag: child for child in case}
        if "failure" in tags:
            message = tags["failure"].get("message", "")
            status = "xpass" if message.startswith("[XPASS(strict)]") else "failed"
        elif "error" in tags:
            status = "error"
        elif "skipped" in tags:
            status = "xfail" if tags["skipped"].get("type") == "pytest.xfail" else "skipped"
        else:
            status = "passed"
        out[nodeid] = _worse(out.get(nodeid), status)
    xpassed = _summary_ids(summary, "XPASS")
    for nodeid, status in out.items():
        if status == "passed" and nodeid in xpassed:
            out[nodeid] = "xpass"
    return out


def _summary_ids(summary: str, word: str) -> set[str]:
    """Node ids pytest's short summary lists under ``word`` (``XPASS id`` / ``XPASS id - r``)."""
    ids = set()
    for line in summary.splitlines():
        if line.startswith(word + " "):
            rest = line[len(word) + 1 :]
            ids.add(rest)
            ids.add(rest.split(" - ", 1)[0])
            ids.add(rest.split(" ", 1)[0])
    return ids


_ORDER = ["passed", "skipped", "xfail", "xpass", "error", "failed"]


def _worse(old: str | None, new: str) -> str:
    if old is None:
        return new
    return max(old, new, key=_ORDER.index)


# Django (unittest's TextTestResult at verbosity 2): "name (where) ... status", the first
# docstring line on its own line before " ... " when the test has one; a failing subtest's
# line is indented by two spaces on Python 3.11 ("  name (where) (params) ... FAIL").
_DJANGO_HEAD = re.compile(
    r"^ *(?P<name>\w+) \((?P<where>[\w.]+)\)(?P<sub> [\[(].*?)?(?= \.\.\. |$)"
)
_DJANGO_STATUS = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfail",
    "unexpected success": "xpass",
}


def unittest_key(name: str, where: str) -> str:
    """``module.Class.name``: one spelling of a unittest id (3.11 repeats the name)."""
    if where.endswith("." + name):
        where = where[: -len(name) - 1]
    return f"{where}.{name}"


def django_statuses(text: str) -> dict[str, str]:
    """``module.Class.test_name`` -> status from Django's ``runtests.py -v 2`` output. A
    failing subtest is listed as ``module.Class.test_name (params)`` and fails its test too
    (unittest prints no line for a subtest that passes)."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _DJANGO_HEAD.match(line)
        if not head:
            continue
        tail = line[head.end() :]
        if " ... " not in tail and i + 1 < len(lines) and " ... " in lines[i + 1]:
            tail = lines[i + 1][lines[i + 1].index(" ... ") :]  # the docstring line
        if not tail.startswith(" ... ") and " ... " not in tail:
            continue
        word = tail.split(" ... ", 1)[1].strip()
        status = _django_word(word)
        if status is None:
            continue
        key = unittest_key(head["name"], head["where"])
        if head["sub"]:
            if status == "passed":
                continue
            sub = key + head["sub"]
            out[sub] = _worse(out.get(sub), status)
        out[key] = _worse(out.get(key), status)
    return out


def _django_word(word: str) -> str | None:
    if word in _DJANGO_STATUS:
        return _DJANGO_STATUS[word]
    if word.startswith("skipped"):
        return "skipped"
    return None


# SymPy's own runner (bin/test --verbose): "path[N]" opens a file, then one line per test,
# "test_name ok" (or f, X, F, E, T, "reason s"), the last with "[OK]" or "[FAIL]" appended.
# From 1.13 bin/test runs pytest, whose -v lines are "path::test_name PASSED [ 5%]".
_SYMPY_FILE = re.compile(r"^(?P<path>\S+\.py)\[\d+\]")
_SYMPY_TEST = re.compile(r"^(?P<name>test_\w+)(?P<rest>( .*)?)$")
_SYMPY_CHAR = {
    "ok": "passed",
    "f": "xfail",
    "X": "xpass",
    "F": "failed",
    "E": "error",
    "T": "failed",
}
_PYTEST_V = re.compile(r"^(?P<id>\S+::\S+) (?P<word>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_PYTEST_WORD = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "xfail",
    "XPASS": "xpass",
}


def sympy_statuses(text: str) -> dict[str, str]:
    """``path::test_name`` -> status from SymPy's ``bin/test --verbose`` output (its own
    runner's lines, or pytest's ``-v`` lines where bin/test runs pytest)."""
    out: dict[str, str] = {}
    current = ""
    status: str | None
    for line in text.splitlines():
        found = _PYTEST_V.match(line)
        if found:
            key, status = found["id"], _PYTEST_WORD[found["word"]]
            out[key] = _worse(out.get(key), status)
            continue
        opened = _SYMPY_FILE.match(line)
        if opened:
            current = opened["path"]
            line = line[opened.end() :].strip()
        test = _SYMPY_TEST.match(line.strip())
        if not test or not current:
            continue
        rest = re.sub(r"\s*\[(OK|FAIL)\]\s*$", "", test["rest"]).strip()
        if not rest:
            continue
        last = rest.split()[-1]
        status = _SYMPY_CHAR.get(last) or ("skipped" if last in ("s", "w", "K") else None)
        if status is None:
            continue
        key = f"{current}::{test['name']}"
        out[key] = _worse(out.get(key), status)
    return out
