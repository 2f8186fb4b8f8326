"""The host side of a warm grading server: ``runner.py serve SPOOL`` (the guest runner).

The server imports pytest once and forks a test process per request it finds in
``SPOOL/requests``; it writes each request's ``done.json`` beside its observations and stops
when ``SPOOL/control/stop`` exists. The docker backend runs it in a container, the local
backend as a subprocess; both hand it requests the same way (:func:`run_on_server`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Protocol

from editcredit.sandbox.base import RunResult, result_from_out_dir

#: How often the host looks for a request's done.json.
POLL_S = 0.002
#: How often it asks whether the server still lives while it waits.
LIVENESS_S = 0.5
#: What the host waits beyond a run's own budget before it declares the server stuck.
MARGIN_S = 15.0


class WarmServer(Protocol):
    """What :func:`run_on_server` needs of a backend's server."""

    def alive(self) -> bool:
        """Is the server process (or container) still running?"""

    def restart(self) -> None:
        """Stop the server, whatever its state, and start a new one on the same spool."""


def make_spool(root: Path) -> None:
    """The spool's folders under ``root`` (an empty directory)."""
    for name in ("jobs", "requests", "control"):
        (root / name).mkdir(exist_ok=True)


def wait_ready(spool: Path, alive, timeout_s: float) -> bool:
    """Wait until the server has written ``control/ready.json``; False if it died or did not
    in ``timeout_s``."""
    ready = spool / "control" / "ready.json"
    deadline = time.monotonic() + timeout_s
    while not ready.exists():
        if time.monotonic() > deadline or not alive():
            return False
        time.sleep(0.01)
    return True


def run_on_server(
    spool: Path, guest_request: dict, out_dir: Path, wait_s: float, server: WarmServer
) -> RunResult:
    """Submit one request to the server on ``spool`` and wait for its ``done.json``.

    A server that dies before it picks the request up is restarted and the request submitted
    again; one that dies with it, or does not answer within ``wait_s`` (plus a margin), is
    restarted and the run reported as ``sandbox_died`` (an infrastructure failure, never a
    score)."""
    name = f"{time.monotonic_ns():020d}-{uuid.uuid4().hex}.json"
    requests = spool / "requests"
    tmp = requests / (name + ".part")
    tmp.write_text(json.dumps(guest_request))
    os.replace(tmp, requests / name)
    done = out_dir / "done.json"
    deadline = time.monotonic() + wait_s + MARGIN_S
    next_check = time.monotonic() + LIVENESS_S
    while not done.exists():
        now = time.monotonic()
        if now > deadline:
            server.restart()
            return RunResult("sandbox_died", None, "grading server did not answer in time")
        if now > next_check:
            next_check = now + LIVENESS_S
            if not server.alive():
                picked_up = not (requests / name).exists()
                server.restart()
                if not picked_up:  # the request never ran: submit it to the new server
                    (requests / name).unlink(missing_ok=True)
                    return run_on_server(spool, guest_request, out_dir, wait_s, server)
                return RunResult("sandbox_died", None, "grading server exited")
        time.sleep(POLL_S)
    return result_from_out_dir(out_dir)
