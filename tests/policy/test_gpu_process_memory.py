"""A process's whole device memory from nvidia-smi (editcredit.policy.gpu_processes) and the
line each GPU job prints of it at exit (editcredit.policy.devices), by table on CPU."""

from __future__ import annotations

import os
import subprocess

import pytest

from editcredit.policy import devices
from editcredit.policy.gpu_memory import PROCESS_OVERHEAD_MB
from editcredit.policy.gpu_processes import parse_process_memory, process_memory_mb

APPS = "4242, 4058\n501, 3030\n\n4242, 12\n777, [N/A]\n"


@pytest.mark.parametrize(("pid", "mb"), [(4242, 4070), (501, 3030), (777, None), (9, None)])
def test_a_process_memory_is_its_nvidia_smi_lines(pid, mb):
    assert parse_process_memory(APPS, pid) == mb


def test_process_memory_without_nvidia_smi_is_none():
    def missing(cmd, **kwargs):
        raise FileNotFoundError(cmd[0])

    def answer(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 0, f"{os.getpid()}, 1908\n", "")

    assert process_memory_mb(run=missing) is None
    assert process_memory_mb(run=answer) == 1908
    assert process_memory_mb(4242, run=answer) is None


@pytest.mark.parametrize(
    ("process_mb", "reserved_mib", "outside"), [(4058, 3310, 748), (1908, 1128, 780)]
)
def test_the_exit_line_names_what_lies_outside_the_allocator(
    monkeypatch, process_mb, reserved_mib, outside
):
    monkeypatch.setattr(devices.torch.cuda, "memory_reserved", lambda i: reserved_mib * 2**20)
    line = devices._outside_line(process_mb, 1)
    assert line.startswith(f"GPU memory of pid {os.getpid()} at exit: {process_mb} MiB")
    assert f"{outside} MiB of it outside the allocator" in line
    assert f"declared overhead {PROCESS_OVERHEAD_MB} MiB" in line
    assert "not listed" in devices._outside_line(None, 1)
