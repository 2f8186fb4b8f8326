"""Pytest plugin that records every collected item's phase outcomes as JSON lines.

Runs inside the sandbox with only the standard library and pytest. The grader never parses
terminal text: it reads the records this plugin writes to a file outside the workspace.
One line per event:

- ``{"event": "session_start", "nonce": ...}``
- ``{"event": "collect_error", "nodeid": ..., "message": ...}``
- ``{"event": "phase", "nodeid": ..., "when": "setup"|"call"|"teardown", "outcome": ...,
  "wasxfail": bool, "xfail_not_run": bool, "xpass_strict": bool, "message": ...}``
- ``{"event": "session_finish", "exitstatus": int}``
"""

from __future__ import annotations

import json
import os

MESSAGE_LIMIT = 2000


class Observer:
    """Writes structured per-phase records for each test item."""

    def __init__(self, path: str, nonce: str) -> None:
        self._nonce = nonce
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives for the session

    def _write(self, record: dict) -> None:
        record["nonce"] = self._nonce
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")
        self._fh.flush()

    def pytest_sessionstart(self, session) -> None:
        self._write({"event": "session_start"})

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._write(
                {
                    "event": "collect_error",
                    "nodeid": report.nodeid,
                    "message": _message(report),
                }
            )

    def pytest_runtest_logreport(self, report) -> None:
        wasxfail = hasattr(report, "wasxfail")
        message = _message(report)
        self._write(
            {
                "event": "phase",
                "nodeid": report.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "wasxfail": wasxfail,
                "xfail_not_run": wasxfail and "[NOTRUN]" in str(report.wasxfail),
                "xpass_strict": report.failed and message.startswith("[XPASS(strict)]"),
                "message": message,
            }
        )

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self._write({"event": "session_finish", "exitstatus": int(exitstatus)})
        self._fh.close()


def _message(report) -> str:
    """The short crash message of a report (the structured reprcrash, not the terminal)."""
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return ""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)[:MESSAGE_LIMIT]
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])[:MESSAGE_LIMIT]
    return str(longrepr)[:MESSAGE_LIMIT]


def from_environment() -> Observer:
    """Build the observer from EDITCREDIT_OBS_PATH / EDITCREDIT_OBS_NONCE, removing both."""
    path = os.environ.pop("EDITCREDIT_OBS_PATH")
    nonce = os.environ.pop("EDITCREDIT_OBS_NONCE", "")
    return Observer(path, nonce)
