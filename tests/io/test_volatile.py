"""editcredit.io.volatile: one name for every volatile sidecar."""

from __future__ import annotations

import pytest

from editcredit.io import volatile


@pytest.mark.parametrize(
    "result, sidecar",
    [
        ("runs/M-s42/step_4/segment.json", "runs/M-s42/step_4/segment.volatile.json"),
        ("results/eval/base/b/slots.parquet", "results/eval/base/b/slots.volatile.json"),
        ("results/training/control/s42.json", "results/training/control/s42.volatile.json"),
    ],
)
def test_one_name_for_every_volatile_sidecar(result, sidecar):
    assert volatile.volatile_sidecar(result) == sidecar
    assert volatile.is_volatile(sidecar) and not volatile.is_volatile(result)
