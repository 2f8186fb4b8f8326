"""The one-node SLURM of the workflow tests (dev/slurm.sh), started once per session and shared by
every module that asks for it: it owns /etc/slurm/slurm.conf while it runs, so there is one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from taskfactory import REPO

SLURM_SH = Path(REPO, "dev", "slurm.sh")
DAEMONS = ("munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A running one-node SLURM; the environment its clients need (SLURM_CONF)."""
    if os.geteuid() != 0 and shutil.which("slurmctld") is None:
        pytest.skip("a local SLURM needs root to install and start (dev/slurm.sh start)")
    state = tmp_path_factory.mktemp("slurm")
    env = {
        **os.environ,
        "EDITCREDIT_SLURM_DIR": str(state),
        "EDITCREDIT_SLURM_PORT": os.environ.get("EDITCREDIT_TEST_SLURM_PORT", "6917"),
    }
    env.pop("SLURM_JOB_ID", None)
    started = subprocess.run(
        [str(SLURM_SH), "start"], env=env, capture_output=True, text=True, timeout=900
    )
    try:
        assert started.returncode == 0, started.stderr[-3000:]
        env["SLURM_CONF"] = started.stdout.strip().split("=", 1)[1]
        yield env
    finally:
        stop = subprocess.run(
            [str(SLURM_SH), "stop"], env=env, capture_output=True, text=True, timeout=300
        )
        left = {d: (state / "run" / f"{d}.pid").read_text() for d in DAEMONS if _alive(state, d)}
        assert stop.returncode == 0 and not left, (stop.stderr, left)


def _alive(state: Path, daemon: str) -> bool:
    pidfile = state / "run" / f"{daemon}.pid"
    if not pidfile.is_file():
        return False
    try:
        os.kill(int(pidfile.read_text().strip()), 0)
    except (ProcessLookupError, ValueError):
        return False
    return True
