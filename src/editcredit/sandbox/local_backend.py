"""Local sandbox: a subprocess with rlimits, a timeout and, where allowed, no network.

WEAKER than docker: the tests run as the calling user on the host's file system. It exists for
machines without a docker daemon, and every report says so in its ``isolation`` field.

Two modes (``sandbox.local_mode``), as the docker backend's: ``warm`` keeps one grading server
(``runner.py serve``, under the same ``unshare``) per sandbox, which imports pytest once and
forks a test process per grading; ``fresh`` starts ``runner.py once`` for each grading. The
test process is a forked child of the runner in both, with the same environment and rlimits.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

from editcredit.sandbox.base import (
    GUEST_DIR,
    TEST_ENV,
    RunRequest,
    RunResult,
    Sandbox,
    SandboxError,
    result_from_out_dir,
)
from editcredit.sandbox.limits import GoldTimesBook, LimitSettings
from editcredit.sandbox.spool import MARGIN_S, make_spool, run_on_server, wait_ready

START_TIMEOUT_S = 60.0
RLIMITS = {"RLIMIT_AS": 2 * 1024**3, "RLIMIT_FSIZE": 256 * 1024**2, "RLIMIT_CORE": 0}


#: The runner as process 1 of its own process namespace (with its own ``/proc``, where it reads
#: its test processes' CPU seconds), as the docker backend's server is in its container: the
#: kernel hands process 1 only the signals it handles, so code under test cannot stop it and
#: turn its own failure into a died sandbox (masked, not scored); and when ``unshare`` dies,
#: the runner and every process of the namespace with it.
PID_NAMESPACE = ["--pid", "--fork", "--mount-proc", "--kill-child"]
#: The ``unshare`` flags tried in order (as root, then in a user namespace): a namespace of its
#: own for the runner and no network, else no network alone.
UNSHARE_FLAGS = (
    [*PID_NAMESPACE, "--net"],
    ["-r", *PID_NAMESPACE, "--net"],
    ["--net"],
    ["-r", "--net"],
)


def _unshare_prefix() -> list[str]:
    """The first of :data:`UNSHARE_FLAGS` that works here (none: no ``unshare`` at all)."""
    exe = shutil.which("unshare")
    if exe is None:
        return []
    for flags in UNSHARE_FLAGS:
        probe = subprocess.run([exe, *flags, "true"], capture_output=True)
        if probe.returncode == 0:
            return [exe, *flags]
    return []


class LocalSandbox(Sandbox):
    """Grades in a local subprocess (weaker isolation, stated in every report)."""

    name = "local"

    def __init__(
        self,
        timeout_factor: float,
        limits: LimitSettings,
        mode: str,
        gold_times: GoldTimesBook | None = None,
    ) -> None:
        """``mode`` is ``sandbox.local_mode`` (``warm`` or ``fresh``; config/schema.yaml holds
        its default)."""
        if mode not in ("warm", "fresh"):
            raise ValueError(f"unknown local sandbox mode {mode!r} (warm or fresh)")
        super().__init__(timeout_factor, None, limits, gold_times)
        self.mode = mode
        self._prefix = _unshare_prefix()
        network = "no network (unshare)" if self._prefix else "NETWORK NOT ISOLATED"
        runner = (
            "the runner process 1 of its own pid namespace"
            if "--pid" in self._prefix
            else "the runner signalable by the tests"
        )
        self.isolation = (
            "local subprocess (weaker than docker): same user and file system, rlimits, "
            f"{network}, {runner}"
        )
        self._env = dict(TEST_ENV)
        self._env["PATH"] = f"{sys.prefix}/bin:" + self._env["PATH"]
        self._spool: Path | None = None
        self._server: subprocess.Popen | None = None
        self._finalizer = None
        if mode == "warm":
            self._spool = Path(tempfile.mkdtemp(prefix="editcredit-local-spool-"))
            make_spool(self._spool)
            self._finalizer = weakref.finalize(self, _stop, None, self._spool)
            # started at the first grading: a pool's sandboxes that never grade cost nothing

    def _guest_request(self, request: RunRequest) -> dict:
        return {
            "workspace": str(request.workspace),
            "out_dir": str(request.out_dir),
            "tests": request.tests,
            "env": self._env,
            "nonce": request.nonce,
            "timeout_s": request.timeout_s,
            "rlimits": RLIMITS,
            # the embedded suites' image installs pytest alone: the host interpreter's own
            # plugins (a development or GPU environment's) take no part in a grading
            "image_plugins": False,
            **request.guest_fields(),
        }

    def _run(self, request: RunRequest) -> RunResult:
        guest_request = self._guest_request(request)
        if self._spool is not None:
            if self._server is None:
                self._start_server()
            return run_on_server(self._spool, guest_request, request.out_dir, request.wait_s, self)
        req_path = request.out_dir.parent / "request.json"
        req_path.write_text(json.dumps(guest_request))
        cmd = [*self._prefix, sys.executable, str(GUEST_DIR / "runner.py"), "once", str(req_path)]
        try:
            subprocess.run(
                cmd, env=self._env, capture_output=True, timeout=request.wait_s + MARGIN_S
            )
        except subprocess.TimeoutExpired:
            return RunResult("sandbox_died", None, "local runner did not finish in time")
        return result_from_out_dir(request.out_dir)

    # -- the warm server ------------------------------------------------------------------
    def _start_server(self) -> None:
        spool = self._spool
        assert spool is not None and self._finalizer is not None, "a warm sandbox's server"
        (spool / "control" / "ready.json").unlink(missing_ok=True)
        (spool / "control" / "stop").unlink(missing_ok=True)
        log = open(spool / "control" / "server.log", "ab")  # noqa: SIM115 - the server's own
        cmd = [*self._prefix, sys.executable, str(GUEST_DIR / "runner.py"), "serve", str(spool)]
        self._server = subprocess.Popen(
            cmd, env=self._env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
        log.close()
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop, self._server, spool)
        if not wait_ready(spool, self.alive, START_TIMEOUT_S):
            tail = (spool / "control" / "server.log").read_text(errors="replace")[-2000:]
            self.close()
            raise SandboxError(f"local grading server did not start: {tail}")

    def alive(self) -> bool:
        return self._server is not None and self._server.poll() is None

    def restart(self) -> None:
        _kill(self._server)
        self._server = None
        self._start_server()

    def close(self) -> None:
        """Stop the warm server (it finishes no further request) and remove its spool."""
        if self._finalizer is not None:
            self._finalizer()
        self._server = None


def _kill(server: subprocess.Popen | None) -> None:
    """Kill the server and the test processes it forked (each leads its own session, so
    killing the server alone would leave a running test, a loop say, behind)."""
    if server is None:
        return
    for child in _children(server.pid):
        with contextlib.suppress(OSError):
            os.killpg(child, signal.SIGKILL)  # its session's group, once it has one
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(OSError):
        server.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(timeout=10)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from ``/proc``; none where it cannot tell)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and fields[1] == str(pid):
                found.append(int(entry))
    return found


def _stop(server: subprocess.Popen | None, spool: Path) -> None:
    """Ask the server to stop, kill it if it has not within a few seconds, remove the spool."""
    if server is not None and server.poll() is None:
        with contextlib.suppress(OSError):
            (spool / "control" / "stop").touch()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill(server)
    shutil.rmtree(spool, ignore_errors=True)
