"""Local sandbox: a subprocess with rlimits, a timeout and, where allowed, no network.

WEAKER than docker: the tests run as the calling user on the host's file system. It exists for
machines without a docker daemon, and every report says so in its ``isolation`` field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from editcredit.sandbox.base import (
    GUEST_DIR,
    TEST_ENV,
    RunRequest,
    RunResult,
    Sandbox,
    result_from_out_dir,
)
from editcredit.sandbox.limits import GoldTimesBook, LimitSettings

MARGIN_S = 15.0
RLIMITS = {"RLIMIT_AS": 2 * 1024**3, "RLIMIT_FSIZE": 256 * 1024**2, "RLIMIT_CORE": 0}


def _unshare_prefix() -> list[str]:
    """``unshare --net`` (as root) or ``unshare -rn`` (user namespace), if either works."""
    exe = shutil.which("unshare")
    if exe is None:
        return []
    for flags in (["--net"], ["-r", "--net"]):
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
        gold_times: GoldTimesBook | None = None,
    ) -> None:
        super().__init__(timeout_factor, None, limits, gold_times)
        self._prefix = _unshare_prefix()
        network = "no network (unshare)" if self._prefix else "NETWORK NOT ISOLATED"
        self.isolation = (
            f"local subprocess (weaker than docker): same user and file system, rlimits, {network}"
        )

    def _run(self, request: RunRequest) -> RunResult:
        env = dict(TEST_ENV)
        env["PATH"] = f"{sys.prefix}/bin:" + env["PATH"]
        guest_request = {
            "workspace": str(request.workspace),
            "out_dir": str(request.out_dir),
            "tests": request.tests,
            "env": env,
            "nonce": request.nonce,
            "timeout_s": request.timeout_s,
            "rlimits": RLIMITS,
            **request.guest_fields(),
        }
        req_path = request.out_dir.parent / "request.json"
        req_path.write_text(json.dumps(guest_request))
        cmd = [*self._prefix, sys.executable, str(GUEST_DIR / "runner.py"), "once", str(req_path)]
        try:
            subprocess.run(cmd, env=env, capture_output=True, timeout=request.wait_s + MARGIN_S)
        except subprocess.TimeoutExpired:
            return RunResult("sandbox_died", None, "local runner did not finish in time")
        return result_from_out_dir(request.out_dir)
