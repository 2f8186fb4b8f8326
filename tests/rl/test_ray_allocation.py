"""The pure parts of a Ray cluster in a SLURM allocation (editcredit.rl.ray_allocation); the
cluster itself runs in tests/workflow/test_slurm_ray.py against a real SLURM."""

from __future__ import annotations

import pytest

from editcredit.rl.ray_allocation import (
    RayAllocationError,
    allocation_nodes,
    count_cpu_ids,
    job_cpus,
    ray_env,
)
from editcredit.rl.workers import make_workers

DETAIL = """JobId=5 JobName=wrap
   NodeList=vm
   NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2 ReqB:S:C:T=0:0:*:*
   JOB_GRES=(null)
     Nodes=vm CPU_IDs=0-1 Mem=500 GRES=
   MinCPUsNode=2 MinMemoryNode=500M MinTmpDiskNode=0
"""  # scontrol show job -d, SLURM 22.05 (dev/slurm.sh), shortened


@pytest.mark.parametrize(
    "ids, expected",
    [("0", 1), ("0-1", 2), ("0-3,8", 5), ("0-3,8-11", 8), ("4,6,8", 3)],
)
def test_count_cpu_ids(ids, expected):
    assert count_cpu_ids(ids) == expected


@pytest.mark.parametrize("ids", ["", "0-", "a", "0-1;2"])
def test_count_cpu_ids_refuses_what_it_cannot_read(ids):
    with pytest.raises(ValueError, match="CPU_IDs"):
        count_cpu_ids(ids)


def test_job_cpus_reads_every_node_line():
    assert job_cpus(DETAIL) == [("vm", 2)]
    two = DETAIL.replace(
        "     Nodes=vm CPU_IDs=0-1 Mem=500 GRES=",
        "     Nodes=n[1-2] CPU_IDs=0-7 Mem=500 GRES=\n     Nodes=n3 CPU_IDs=0-1,4-5 Mem=500 GRES=",
    )
    assert job_cpus(two) == [("n[1-2]", 8), ("n3", 4)]
    assert job_cpus("JobId=5\n   NodeList=(null)\n") == []


def test_outside_a_slurm_job_the_error_says_what_is_missing():
    with pytest.raises(RayAllocationError, match="SLURM_JOB_ID is not set"):
        allocation_nodes({"PATH": "/bin"})


def test_make_workers_refuses_gpu_workers_in_an_allocation():
    cfg = {"enabled": True, "address": "slurm", "num_workers": 1, "gpus_per_worker": 1}
    with pytest.raises(RayAllocationError, match="gpus_per_worker must be 0"):
        make_workers(cfg, {})


def test_ray_env_keeps_the_allocation_drops_the_steps_sizing():
    env = {
        "PATH": "/bin",
        "SLURM_JOB_ID": "7",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "SLURM_CPUS_PER_TASK": "2",
        "SLURM_NTASKS": "1",
        "SLURM_MEM_PER_NODE": "1000",
        "SRUN_CPUS_PER_TASK": "2",
        "SBATCH_PARTITION": "x",
        "RAY_AUTH_MODE": "disabled",
    }
    out = ray_env(env, "t0k")
    assert out == {
        "PATH": "/bin",
        "SLURM_JOB_ID": "7",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": "t0k",
        "RAY_USAGE_STATS_ENABLED": "0",
    }
