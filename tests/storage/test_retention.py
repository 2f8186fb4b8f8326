"""Retention of intermediate checkpoints: which segments keep their files (table-driven), and
pruning one segment: the large files go, the receipts stay, a record lists what went."""

from __future__ import annotations

import json
import os
import stat

import pytest

from editcredit.io.identity import write_identity
from editcredit.storage.retention import PruneError, prune_segment, pruned_steps, retained_steps


@pytest.mark.parametrize(
    "ends, keep, protect, kept",
    [
        ([1, 2, 3], 0, [], [1, 2, 3]),  # 0 keeps all
        ([1, 2, 3], 2, [], [2, 3]),  # every 2nd segment and the endpoint
        ([2, 4, 6, 8, 10], 2, [], [4, 8, 10]),
        ([2, 4, 6, 8, 10], 3, [], [6, 10]),
        ([2, 4, 6, 8, 10], 1, [], [2, 4, 6, 8, 10]),
        ([2, 4, 6, 8, 10], 9, [], [10]),  # only the endpoint
        ([2, 4, 6, 8, 10], 3, [2], [2, 6, 10]),  # a diagnostic step stays
        ([5], 2, [], [5]),
        ([], 2, [], []),
    ],
)
def test_retained_steps(ends, keep, protect, kept):
    assert retained_steps(ends, keep, protect) == kept
    assert pruned_steps(ends, keep, protect) == [e for e in ends if e not in kept]


def test_a_negative_keep_is_refused():
    with pytest.raises(ValueError, match="training.keep_checkpoints is -1"):
        retained_steps([1, 2], -1)


def make_segment(root):
    seg = root / "runs/M-s1/step_1"
    for rel, text in {
        "model/model.safetensors": "weights" * 100,
        "model/config.json": "{}",
        "model/tokenizer.json": "{}",
        "state/optimizer.pt": "moments" * 200,
        "state/rng.json": "{}",
        "state/cursor.json": "{}",
        "rollouts.parquet": "rows",
        "segment.json": "{}",
    }.items():
        (seg / rel).parent.mkdir(parents=True, exist_ok=True)
        (seg / rel).write_text(text)
    write_identity(seg, {"c": 1})
    return seg


def protect(path):
    """What Snakemake's protected() does: everything read-only."""
    for dirpath, dirs, files in os.walk(path, topdown=False):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            os.chmod(p, stat.S_IMODE(os.lstat(p).st_mode) & ~0o222)
    os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o222)


def test_prune_removes_model_and_optimizer_and_records_them(tmp_path):
    seg = make_segment(tmp_path)
    hashes = json.loads((seg / "identity.json").read_text())["files"]
    protect(seg)
    record_path = tmp_path / "runs/M-s1/pruned/step_1.json"
    record = prune_segment(seg, record_path, {"run": "M-s1", "step": 1})
    assert not (seg / "model/model.safetensors").exists()
    assert not (seg / "state/optimizer.pt").exists()
    left = sorted(p.relative_to(seg).as_posix() for p in seg.rglob("*") if p.is_file())
    assert left == [
        "identity.json",
        "model/config.json",
        "model/tokenizer.json",
        "rollouts.parquet",
        "segment.json",
        "state/cursor.json",
        "state/rng.json",
    ]
    assert json.loads(record_path.read_text()) == record
    assert record["removed"] == [
        {
            "path": "model/model.safetensors",
            "sha256": hashes["model/model.safetensors"],
            "bytes": 700,
        },
        {"path": "state/optimizer.pt", "sha256": hashes["state/optimizer.pt"], "bytes": 1400},
    ]
    assert record["bytes_freed"] == 2100 and record["run"] == "M-s1"
    assert stat.S_IMODE((seg / "model").stat().st_mode) & 0o222 == 0


def test_an_interrupted_prune_redone_still_lists_every_removed_file(tmp_path):
    seg = make_segment(tmp_path)
    (seg / "model/model.safetensors").unlink()  # the first attempt got this far
    record = prune_segment(seg, tmp_path / "r.json", {})
    assert [r["path"] for r in record["removed"]] == [
        "model/model.safetensors",
        "state/optimizer.pt",
    ]
    assert record["removed"][0]["bytes"] is None and record["bytes_freed"] == 1400


def test_a_segment_without_identity_receipt_is_not_pruned(tmp_path):
    seg = make_segment(tmp_path)
    (seg / "identity.json").unlink()
    with pytest.raises(PruneError, match="no identity.json"):
        prune_segment(seg, tmp_path / "r.json", {})
    assert (seg / "model/model.safetensors").is_file() and not (tmp_path / "r.json").exists()
