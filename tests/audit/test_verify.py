"""``verify_tree`` on a small fake workflow tree: what it re-hashes and what it traces."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import yaml
from safetensors.numpy import save_file
from taskfactory import REPO

from editcredit.audit.verify import format_report, report_json, verify_tree
from editcredit.config import load_config
from editcredit.io import hash_cache, identity, provenance
from editcredit.io.identity import write_identity
from editcredit.io.provenance import (
    write_result_json,
    write_result_parquet,
    write_result_tex,
)

TABLE = "\\begin{tabular}{l}\n\\end{tabular}\n"


def pinned_config(pin: str) -> str:
    """The repository's config with one suite, toy (the default suite's settings), pinned to
    ``pin``."""
    config = yaml.safe_load(Path(REPO, "config", "config.yaml").read_text())
    config["suites"] = {"toy": {**config["suites"]["minibugs"], "manifest_sha256": pin}}
    return yaml.safe_dump(config, sort_keys=False)


def recorded_config(root: Path) -> dict:
    """The config under ``root`` as a rule records it (validated, defaults filled)."""
    return load_config(root / "config/config.yaml")


def _model(d: Path, value: float) -> None:
    d.mkdir(parents=True)
    save_file({"w": np.full((4, 4), value, np.float32)}, str(d / "model.safetensors"))
    (d / "config.json").write_text("{}")


def build_tree(root: Path, n_controls: int = 2) -> Path:
    """Suite -> controls -> stats -> main.tex; base + run -> audit -> summary -> audit.tex."""
    suite = root / "data/frozen/toy"
    suite.mkdir(parents=True)
    (suite / "tasks.parquet").write_bytes(b"PAR1 pretend tasks PAR1")
    manifest = json.dumps(
        {"tasks_parquet_sha256": hashlib.sha256((suite / "tasks.parquet").read_bytes()).hexdigest()}
    )
    (suite / "manifest.json").write_text(manifest)
    pin = hashlib.sha256(manifest.encode()).hexdigest()
    (root / "config").mkdir()
    (root / "config/config.yaml").write_text(pinned_config(pin))
    config = recorded_config(root)  # the results are built under it: no drift
    _model(root / "models/base/tiny", 0.0)
    write_identity(root / "models/base/tiny", {})
    _model(root / "runs/M-s1/step_2/model", 1.0)
    write_result_json(
        "runs/M-s1/step_2/segment.json",
        {"run": "M-s1"},
        ["data/frozen/toy/tasks.parquet", "models/base/tiny"],
        config,
    )
    write_identity(root / "runs/M-s1/step_2", {})
    tasks = "data/frozen/toy/tasks.parquet"
    for i in range(n_controls):
        write_result_json(f"results/controls/toy/tasks/t{i}.json", {"i": i}, [tasks], config)
    write_result_json("results/controls/toy/summary.json", {"n": 2}, [tasks], config)
    audit = "results/audits/M-s1/step_2.json"
    write_result_json(audit, {"ok": True}, ["runs/M-s1/step_2/model", "models/base/tiny"], config)
    write_result_parquet("results/audits/summary.parquet", pa.table({"a": [1]}), [audit], config)
    write_result_json(
        "results/stats/cmp.json", {"d": 0.1}, ["results/controls/toy/summary.json", audit], config
    )
    write_result_tex("paper/tables/main.tex", TABLE, ["results/stats/cmp.json"], config)
    write_result_tex("paper/tables/audit.tex", TABLE, ["results/audits/summary.parquet"], config)
    return root


CLEAN = {"package_version": "0", "git_commit": "c" * 40, "git_dirty": False}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """Built from a clean tree, whatever the checkout running the test holds."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(provenance, "code_version", lambda: CLEAN)
    monkeypatch.setattr(identity, "code_version", lambda: CLEAN)
    return build_tree(tmp_path)


def flip_byte(path: Path, offset: int = -1) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def by_path(report):
    return {f.path: f for f in report.findings}


def test_clean_tree_verifies(tree):
    report = verify_tree(tree)
    assert report.ok, format_report(report)
    assert report.counts["frozen suites"] == 1 and report.counts["identity receipts"] == 2
    assert report.counts["result files"] == 9  # 7 json (segment included), 1 parquet, 2 tex
    assert "clean" in format_report(report)
    assert report.drift == [] and "DRIFT" not in format_report(report)


def test_one_byte_of_a_frozen_file_names_the_dependent_tables(tree):
    flip_byte(tree / "data/frozen/toy/tasks.parquet", 5)
    report = verify_tree(tree)
    assert not report.ok
    (finding,) = report.findings  # the manifest and the results saw the same change
    assert (finding.path, finding.kinds) == ("data/frozen/toy/tasks.parquet", ["frozen", "input"])
    assert "manifest.json records" in finding.details[0]
    assert "results/controls/toy/summary.json" in finding.details[1]
    (frozen,) = report_json(report)["findings"]
    assert list(frozen["tables"]) == ["paper/tables/main.tex"]  # not audit.tex
    assert frozen["tables"]["paper/tables/main.tex"] == [
        "paper/tables/main.tex",
        "results/stats/cmp.json",
        "results/controls/toy/summary.json",
        "data/frozen/toy",
    ]
    assert {
        "results/controls/toy/tasks/t0.json",
        "runs/M-s1/step_2/segment.json",
        "results/stats/cmp.json",
    } <= set(frozen["affected"])
    text = format_report(report)
    assert "MISMATCH [frozen,input] data/frozen/toy/tasks.parquet" in text
    assert "tables that would change (1):" in text
    assert (
        "paper/tables/main.tex  <-  results/stats/cmp.json  <-  "
        "results/controls/toy/summary.json  <-  data/frozen/toy"
    ) in text


@pytest.mark.parametrize("offset", [2, -3], ids=["key", "hash"])
def test_changed_manifest_fails_its_config_pin(tree, offset):
    flip_byte(tree / "data/frozen/toy/manifest.json", offset)
    report = verify_tree(tree)
    found = by_path(report)
    finding = found.pop("data/frozen/toy/manifest.json")
    assert finding.kinds == ["frozen"] and "suites.toy.manifest_sha256" in finding.details[0]
    if offset == 2:  # the key is garbled: the manifest no longer reads
        assert "not a readable manifest" in finding.details[1] and not found
    else:  # the recorded tasks hash changed: tasks.parquet no longer matches it
        assert list(found) == ["data/frozen/toy/tasks.parquet"]
    assert list(report_json(report)["findings"][0]["tables"]) == ["paper/tables/main.tex"]


def test_changed_checkpoint_reaches_both_tables_through_the_audit(tree):
    flip_byte(tree / "runs/M-s1/step_2/model/model.safetensors")
    report = verify_tree(tree)
    found = {(f.path, f.kind) for f in report.findings}
    assert found == {
        ("runs/M-s1/step_2/model/model.safetensors", "identity"),
        ("runs/M-s1/step_2/model", "input"),
    }
    for f in report_json(report)["findings"]:
        assert set(f["tables"]) == {"paper/tables/main.tex", "paper/tables/audit.tex"}
        assert f["tables"]["paper/tables/audit.tex"][1:3] == [
            "results/audits/summary.parquet",
            "results/audits/M-s1/step_2.json",
        ]


def test_changed_result_is_caught_by_its_consumer(tree):
    path = tree / "results/stats/cmp.json"
    path.write_text(path.read_text().replace('"d": 0.1', '"d": 0.2'))
    report = verify_tree(tree)
    (finding,) = report.findings
    assert (finding.path, finding.kinds) == ("results/stats/cmp.json", ["input"])
    assert "paper/tables/main.tex" in finding.details[0]


def test_missing_and_extra_files_and_missing_blocks(tree):
    (tree / "models/base/tiny/config.json").unlink()
    (tree / "runs/M-s1/step_2/extra.txt").write_text("x")
    (tree / "results/stats/naked.json").write_text("{}")
    (tree / "paper/tables/naked.tex").write_text(TABLE)
    (tree / "results/audits/summary.parquet").unlink()
    found = {f.path: f.kinds for f in verify_tree(tree).findings}
    assert found == {
        "models/base/tiny/config.json": ["identity"],
        "models/base/tiny": ["input"],  # its directory digest, recorded by two results
        "runs/M-s1/step_2/extra.txt": ["identity"],
        "results/stats/naked.json": ["provenance"],
        "paper/tables/naked.tex": ["provenance"],
        "results/audits/summary.parquet": ["input"],
    }


def test_every_file_is_hashed_once(tree, monkeypatch):
    for i in range(2, 40):
        write_result_json(
            f"results/controls/toy/tasks/t{i}.json",
            {"i": i},
            ["data/frozen/toy/tasks.parquet"],
            recorded_config(tree),
        )
    calls: list[Path] = []
    real = hash_cache.sha256_file
    monkeypatch.setattr(hash_cache, "sha256_file", lambda p: calls.append(Path(p)) or real(p))
    report = verify_tree(tree)
    assert report.ok
    assert len(calls) == len(set(calls)) == report.counts["files hashed"]


def test_many_affected_files_are_grouped_by_directory(tree):
    for i in range(2, 40):
        write_result_json(
            f"results/controls/toy/tasks/t{i}.json",
            {"i": i},
            ["data/frozen/toy/tasks.parquet"],
            recorded_config(tree),
        )
    flip_byte(tree / "data/frozen/toy/tasks.parquet", 3)
    text = format_report(verify_tree(tree))
    assert "results/controls/toy/tasks/ (40 files)" in text
    assert "t17.json" not in text


def test_a_pruned_checkpoint_verifies_by_its_retention_record(tree):
    """training.keep_checkpoints: the removed model file is missing by record, and the audit
    that recorded the model directory before the removal still verifies; without the record
    (or with another hash in it) the same tree fails."""
    from editcredit.storage.retention import prune_segment

    seg = tree / "runs/M-s1/step_2"
    record = tree / "runs/M-s1/pruned/step_2.json"
    prune_segment(seg.relative_to(tree), record.relative_to(tree), {"run": "M-s1"})
    assert not (seg / "model/model.safetensors").exists()
    report = verify_tree(tree)
    assert report.ok, format_report(report)
    assert report.counts["files removed by retention"] == 1

    body = json.loads(record.read_text())
    body["removed"][0]["sha256"] = "0" * 64
    record.write_text(json.dumps(body))
    report = verify_tree(tree)
    paths = {f.path: f.kind for f in report.findings}
    assert paths["runs/M-s1/step_2/model/model.safetensors"] == "identity"
    assert paths["runs/M-s1/step_2/model"] == "input"
    record.unlink()
    assert not verify_tree(tree).ok
