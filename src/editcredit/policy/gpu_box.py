"""Print the ``--resources`` of this GPU box for ``profiles/gpu``: ``gpu=N gpu_mem_mb=M``.

    snakemake --workflow-profile profiles/gpu --resources $(python -m editcredit.policy.gpu_box) ...

``gpu_mem_mb`` is the memory the devices' claims may take together (each card's total from
``nvidia-smi`` less ``editcredit.policy.devices.RESERVE_MB``); ``gpu`` bounds how many GPU jobs
run at once, ``--jobs-per-gpu`` (default 32) per device: memory, not that count, is what limits
jobs sharing a card (each GPU rule declares its ``gpu_mem_mb``, ``editcredit.policy.gpu_memory``).
``CUDA_VISIBLE_DEVICES`` (indices or UUIDs) limits the devices counted.
"""

from __future__ import annotations

import argparse
import os
import sys

from editcredit.policy.devices import RESERVE_MB, card_memory


def resources_line(cards: dict[str, int], visible: str | None, jobs_per_gpu: int) -> str:
    """The resources of the devices in ``visible`` (all indices of ``cards`` without it)."""
    devices = visible.split(",") if visible else [k for k in cards if k.isdigit()]
    missing = [dev for dev in devices if dev not in cards]
    if missing:
        raise ValueError(f"nvidia-smi lists no GPU {missing} (CUDA_VISIBLE_DEVICES={visible})")
    memory = sum(cards[dev] - RESERVE_MB for dev in devices)
    return f"gpu={len(devices) * jobs_per_gpu} gpu_mem_mb={memory}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs-per-gpu", type=int, default=32, help="GPU jobs at most per device")
    args = ap.parse_args(argv)
    cards = card_memory()
    if not cards:
        print("no GPU found (nvidia-smi --query-gpu=memory.total gave nothing)", file=sys.stderr)
        return 1
    print(resources_line(cards, os.environ.get("CUDA_VISIBLE_DEVICES"), args.jobs_per_gpu))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
