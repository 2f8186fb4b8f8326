"""dev/slurm.sh's link from the system's slurm.conf to its own: made where none exists, a stale
one (its cluster's daemons all gone, as after a machine restart or a killed test session) is
replaced, and a live cluster's link or a machine's own slurm.conf is never touched.

The script is sourced so that only ``link_system_conf`` runs; the link's path is redirected into
the test's directory (EDITCREDIT_SLURM_SYSTEM_CONF), so nothing under /etc changes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SLURM_SH = Path(__file__).resolve().parents[2] / "dev" / "slurm.sh"


def link(tmp_path: Path, system_conf: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "EDITCREDIT_SLURM_DIR": str(tmp_path / "ours"),
        "EDITCREDIT_SLURM_SYSTEM_CONF": str(system_conf),
    }
    return subprocess.run(
        ["bash", "-c", f"source {SLURM_SH} && link_system_conf"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def other_cluster(tmp_path: Path, pid: int | None) -> Path:
    """A state directory written by dev/slurm.sh; its slurmctld runs as ``pid`` (None: gone)."""
    other = tmp_path / "other"
    (other / "etc").mkdir(parents=True)
    (other / "run").mkdir()
    conf = other / "etc" / "slurm.conf"
    conf.write_text("# written by dev/slurm.sh: a one-node cluster\nClusterName=editcredit\n")
    if pid is not None:
        (other / "run" / "slurmctld.pid").write_text(f"{pid}\n")
    return conf


def test_a_missing_link_is_made(tmp_path):
    system_conf = tmp_path / "etc-slurm" / "slurm.conf"
    done = link(tmp_path, system_conf)
    assert done.returncode == 0, done.stderr
    assert os.readlink(system_conf) == str(tmp_path / "ours" / "etc" / "slurm.conf")


def test_a_stale_link_is_replaced(tmp_path):
    system_conf = tmp_path / "slurm.conf"
    gone = subprocess.Popen(["true"])
    gone.wait()
    system_conf.symlink_to(other_cluster(tmp_path, gone.pid))
    done = link(tmp_path, system_conf)
    assert done.returncode == 0, done.stderr
    assert "replacing the stale link" in done.stderr
    assert os.readlink(system_conf) == str(tmp_path / "ours" / "etc" / "slurm.conf")


def test_a_link_whose_target_is_gone_is_replaced(tmp_path):
    system_conf = tmp_path / "slurm.conf"
    system_conf.symlink_to(tmp_path / "deleted" / "etc" / "slurm.conf")
    done = link(tmp_path, system_conf)
    assert done.returncode == 0, done.stderr
    assert os.readlink(system_conf) == str(tmp_path / "ours" / "etc" / "slurm.conf")


def test_a_running_clusters_link_is_refused(tmp_path):
    system_conf = tmp_path / "slurm.conf"
    target = other_cluster(tmp_path, os.getpid())
    system_conf.symlink_to(target)
    done = link(tmp_path, system_conf)
    assert done.returncode == 1
    assert f"{system_conf} exists" in done.stderr
    assert os.readlink(system_conf) == str(target)


def test_the_machines_own_slurm_conf_is_refused(tmp_path):
    system_conf = tmp_path / "slurm.conf"
    system_conf.write_text("ClusterName=site\n")
    done = link(tmp_path, system_conf)
    assert done.returncode == 1
    assert system_conf.read_text() == "ClusterName=site\n"


def test_a_link_to_a_file_not_written_by_the_script_is_refused(tmp_path):
    site = tmp_path / "site.conf"
    site.write_text("ClusterName=site\n")
    system_conf = tmp_path / "slurm.conf"
    system_conf.symlink_to(site)
    done = link(tmp_path, system_conf)
    assert done.returncode == 1
    assert os.readlink(system_conf) == str(site)
