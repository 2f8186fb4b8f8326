"""The grading report as result files store it: without what the clock, the machine or the
run's nonce decide, so that a rerun writes the same bytes.

A sandbox report observes one run, and some of what it observes changes from run to run with
the same inputs: the wall time (``seconds``, the runner's ``timings``, each phase's
``duration``, a timeout's measured ``seconds``), the sentinel tests' per-run names and numbers
(``sandbox.sentinels``: drawn from a fresh nonce on purpose, METHOD §6), and the log tail,
where pytest prints its durations, temporary paths, object addresses and the sentinels again.
``stored_report`` keeps every fact a verdict or a reader uses (statuses, outcomes, messages,
limits, tampering, the verdict itself) and:

- leaves out the measured seconds (the controls' records keep the gold-run times that per-test
  limits come from; a rollout's or a slot's report never did anything with them);
- names each sentinel by its role (``<sentinel:must_pass>``) instead of its per-run node id,
  masks the numbers of its assertion in its message, and lists the two in role order (they run
  in a per-run order);
- normalizes the log tail (``stable_log_tail``): durations, temporary directories, addresses
  and the sentinels' names and numbers become fixed placeholders, and a progress line keeps its
  characters as counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from editcredit.grading.grader import GradingReport

__all__ = ["SENTINEL_NUMBER", "stable_log_tail", "stable_sandbox", "stored_report"]

#: what a number taken from a sentinel's assertion reads as in stored text
SENTINEL_NUMBER = "<n>"

# (pattern, replacement), applied in order; each names a fact that varies between reruns
_VOLATILE: list[tuple[re.Pattern[str], Any]] = [
    # pytest's wall-clock summary: "3 passed in 0.04s", "in 61.20s (0:01:01)"
    (re.compile(r"\bin \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?"), "in <t>s"),
    # --durations lines: "0.01s call     test_x.py::test_y"
    (re.compile(r"^\d+(?:\.\d+)?s(?= +(?:setup|call|teardown)\b)", re.M), "<t>s"),
    # any other "12.345s"/"0.2 seconds" a test or the runner prints
    (re.compile(r"\b\d+\.\d+ ?(?:s|sec|seconds)\b"), "<t>s"),
    # a sandbox job's scratch directory (tempfile.mkdtemp(prefix="job-"))
    (re.compile(r"(?:/[\w.+-]+)*/job-[A-Za-z0-9_]+"), "<job>"),
    # pytest's and Python's temporary directories
    (re.compile(r"/tmp/pytest-of-[\w.-]+/pytest-\d+"), "<pytest-tmp>"),
    (re.compile(r"/tmp/tmp[A-Za-z0-9_]{6,}"), "<tmp>"),
    # object addresses in reprs: "<object at 0x7f3a2b1c>"
    (re.compile(r"\bat 0x[0-9a-fA-F]+"), "at 0x?"),
    # a line of the sentinel module: its two tests are written in a per-run order
    (re.compile(r"<sentinel-module>\.py:\d+"), "<sentinel-module>.py:<line>"),
    # a progress line ("..F.s  [100%]"): the sentinels run in a per-run order, so the
    # characters are kept as counts (sorted)
    (re.compile(r"^([.FEsxX]+)(?=\s+\[\s*\d+%\]$)", re.M), lambda m: "".join(sorted(m[1]))),
]


def _sentinel_tokens(
    sentinels: Mapping[str, str], messages: Iterable[str]
) -> list[tuple[str, str]]:
    """(per-run text, its placeholder): node ids, module stems, test names, assert numbers."""
    out: list[tuple[str, str]] = []
    for nodeid, role in sentinels.items():
        path, _, name = nodeid.partition("::")
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        out += [(nodeid, f"<sentinel:{role}>"), (path, "<sentinel-module>.py")]
        out += [(stem, "<sentinel-module>"), (name, f"<sentinel:{role}>")]
    numbers = {n for m in messages for n in re.findall(r"\d{4,}", m)}
    out += [(n, SENTINEL_NUMBER) for n in numbers]
    # longest first, so a node id is replaced before the names inside it
    return sorted((t for t in out if t[0]), key=lambda t: (-len(t[0]), t[0]))


def _mask(text: str, tokens: list[tuple[str, str]]) -> str:
    for token, placeholder in tokens:
        text = re.sub(rf"(?<![\w]){re.escape(token)}(?![\w])", placeholder, text)
    return text


def stable_log_tail(
    text: str, sentinels: Mapping[str, str] | None = None, secrets: Iterable[str] = ()
) -> str:
    """``text`` with every volatile fact replaced by a fixed placeholder.

    ``sentinels`` (node id -> role) and ``secrets`` (the sentinels' messages, whose numbers are
    drawn per run) name the run's own volatile tokens.
    """
    text = _mask(text, _sentinel_tokens(sentinels or {}, secrets))
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _stable_phases(phases: list[dict[str, Any]], tokens: list[tuple[str, str]]) -> list:
    out = []
    for phase in phases:
        phase = {k: v for k, v in phase.items() if k != "duration"}
        if tokens and phase.get("message"):
            phase["message"] = _mask(phase["message"], tokens)
        out.append(phase)
    return out


#: a timeout's measured seconds, wall and CPU, and so which of its limits it passed first
TIMEOUT_CLOCK_FACTS = ("seconds", "cpu_s", "limited_by")


def stable_sandbox(sandbox: dict[str, Any]) -> dict[str, Any]:
    """A ``SandboxReport`` dump (``model_dump(mode="json")``) without its volatile facts."""
    roles: dict[str, str] = dict(sandbox.get("sentinels") or {})
    messages = [
        p.get("message", "")
        for item in sandbox.get("sentinel_items") or []
        for p in item.get("phases", [])
    ]
    tokens = _sentinel_tokens(roles, messages)
    out = {k: v for k, v in sandbox.items() if k not in ("seconds", "timings")}
    out["sentinels"] = {f"<sentinel:{r}>": r for r in sorted(roles.values())}
    items = [
        {
            "nodeid": f"<sentinel:{roles.get(item['nodeid'], 'unknown')}>",
            "phases": _stable_phases(item.get("phases", []), tokens),
        }
        for item in sandbox.get("sentinel_items") or []
    ]
    out["sentinel_items"] = sorted(items, key=lambda i: i["nodeid"])  # they run in a random order
    obs = dict(sandbox.get("observations") or {})
    obs["items"] = [
        {**item, "phases": _stable_phases(item.get("phases", []), [])}
        for item in obs.get("items") or []
    ]
    out["observations"] = obs
    out["timeouts"] = [  # the clock's facts (and which limit a loop passed first) vary by load
        {k: v for k, v in t.items() if k not in TIMEOUT_CLOCK_FACTS}
        for t in sandbox.get("timeouts") or []
    ]
    if sandbox.get("collect_timeout"):
        out["collect_timeout"] = {
            k: v for k, v in sandbox["collect_timeout"].items() if k != "seconds"
        }
    out["log_tail"] = stable_log_tail(sandbox.get("log_tail", ""), roles, messages)
    return out


def stored_report(report: GradingReport) -> dict[str, Any]:
    """The JSON-ready report a result file stores (see the module's docstring)."""
    body = report.model_dump(mode="json")
    if body.get("sandbox") is not None:
        body["sandbox"] = stable_sandbox(body["sandbox"])
    return body
