"""Worker processes started from a script with no ``__main__`` guard (a Snakemake ``script:``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# Top-level work, as a Snakemake script has: a spawned child that re-ran it would try to start
# a process of its own during its bootstrap and die.
SCRIPT = """
import multiprocessing
import time

from editcredit.rl.workers import start_spawned

if {helper}:
    proc = start_spawned(time.sleep, (0,))
else:
    proc = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(0,))
    proc.start()
proc.join(60)
print("exitcode", proc.exitcode)
"""


def _child_exitcode(tmp_path, helper: bool) -> str:
    script = tmp_path / "job_script.py"
    script.write_text(textwrap.dedent(SCRIPT.format(helper=helper)))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("helper, expected", [(True, "exitcode 0"), (False, "exitcode 1")])
def test_a_spawned_worker_does_not_rerun_the_script(tmp_path, helper, expected):
    # the plain spawn is the failure the helper avoids (its child re-runs the script and dies)
    assert _child_exitcode(tmp_path, helper) == expected
