"""Drift: outputs built from a dirty tree, and results recorded under another config, are
reported by ``editcredit verify`` (and fail it with ``--strict``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from taskfactory import REPO

from editcredit.audit.drift import Drift, config_drift, current_config_hash, dirty_drift
from editcredit.audit.verify import format_report, report_json, verify_tree
from editcredit.config import ConfigError, load_config
from editcredit.io import identity, provenance
from editcredit.io.provenance import config_hash, write_result_json

C, D, U = "c" * 40, "d" * 64, "e" * 64


def code(dirty, commit=C, diff=None, untracked=None):
    return {
        "git_commit": commit,
        "git_dirty": dirty,
        "git_diff_sha256": diff,
        "git_untracked_sha256": untracked,
    }


@pytest.mark.parametrize(
    ("codes", "groups", "unknown"),
    [
        ({"a": code(False), "b": code(False)}, [], 0),
        ({"a": code(None, "unknown")}, [], 1),
        ({"a": None, "b": "not a block"}, [], 0),  # unreadable: no claim either way
        (
            {"a": code(True, diff=D), "b": code(False), "c": code(True, diff=D)},
            [
                (
                    "commit cccccccccccc, uncommitted diff dddddddddddd, untracked files "
                    "(none or not recorded)",
                    ["a", "c"],
                )
            ],
            0,
        ),
        (
            {"a": code(True, diff=D), "b": code(True, diff=D, untracked=U)},
            [
                (
                    "commit cccccccccccc, uncommitted diff dddddddddddd, untracked files "
                    "(none or not recorded)",
                    ["a"],
                ),
                (
                    "commit cccccccccccc, uncommitted diff dddddddddddd, untracked files "
                    "eeeeeeeeeeee",
                    ["b"],
                ),
            ],
            0,
        ),
        (  # recorded before the diff hash existed: dirty all the same
            {"old": {"git_commit": C, "git_dirty": True}},
            [
                (
                    "commit cccccccccccc, uncommitted diff (none or not recorded), untracked files "
                    "(none or not recorded)",
                    ["old"],
                )
            ],
            0,
        ),
    ],
)
def test_dirty_drift(codes, groups, unknown):
    drift, n_unknown = dirty_drift(codes)
    assert [(d.kind, d.detail, d.paths) for d in drift] == [("dirty", *g) for g in groups]
    assert n_unknown == unknown


@pytest.mark.parametrize(
    ("configs", "groups"),
    [
        ({"a": "1" * 64, "b": "1" * 64}, []),
        ({"a": "1" * 64, "b": "2" * 64, "c": "2" * 64}, [("2" * 12, ["b", "c"])]),
        ({"a": None, "b": "3" * 64}, [("(none or not recorded)", ["a"]), ("3" * 12, ["b"])]),
    ],
)
def test_config_drift(configs, groups):
    drift = config_drift(configs, "1" * 64, "config/config.yaml")
    expected = [
        Drift("config", f"config SHA256 {h}; config/config.yaml is 111111111111 now", paths)
        for h, paths in groups
    ]
    assert drift == expected


def test_the_current_config_hash_is_the_hash_a_rule_records():
    path = Path(REPO, "config/config.yaml")
    assert current_config_hash(path) == config_hash(load_config(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("suites: [1\n", "cannot read it"),
        ("- a list\n", "expected a mapping"),
        ("sandbox: {}\n", "field"),  # the schema's own error, naming the field
    ],
)
def test_a_bad_config_is_one_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        current_config_hash(path)
    assert str(path) in str(err.value)


CLEAN = {"package_version": "0", **code(False)}
DIRTY = {"package_version": "0", **code(True, diff=D, untracked=U)}


@pytest.fixture
def root(tmp_path, monkeypatch):
    """The repository's config and schema, and three results: one built from a clean tree under
    that config, one from a dirty tree, one under another config."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    for name in ("config.yaml", "schema.yaml"):
        shutil.copy(Path(REPO, "config", name), tmp_path / "config" / name)
    cfg = load_config(tmp_path / "config/config.yaml", tmp_path / "config/schema.yaml")
    for path, block, config in (
        ("results/stats/clean.json", CLEAN, cfg),
        ("results/stats/dirty.json", DIRTY, cfg),
        ("results/stats/old.json", CLEAN, {**cfg, "seeds": [0]}),
    ):
        monkeypatch.setattr(provenance, "code_version", lambda b=block: b)
        write_result_json(path, {"x": 1}, [], config)
    monkeypatch.setattr(identity, "code_version", lambda: DIRTY)
    (tmp_path / "models/base/tiny").mkdir(parents=True)
    (tmp_path / "models/base/tiny/w.bin").write_bytes(b"w")
    identity.write_identity(tmp_path / "models/base/tiny", {})
    return tmp_path


def test_verify_reports_dirty_and_other_config_outputs(root):
    report = verify_tree(root)
    assert report.ok and not report.strict_ok  # drift alone is no mismatch
    got = {(d.kind, tuple(d.paths)) for d in report.drift}
    assert got == {
        ("dirty", ("models/base/tiny/identity.json", "results/stats/dirty.json")),
        ("config", ("results/stats/old.json",)),
    }
    text = format_report(report)
    assert (
        "DRIFT [dirty] 2 output(s) built from a dirty tree: commit cccccccccccc, uncommitted "
        "diff dddddddddddd, untracked files eeeeeeeeeeee"
    ) in text
    assert "DRIFT [config] 1 output(s) built under another config" in text
    assert "config/config.yaml is" in text
    body = report_json(report)
    assert body["ok"] is True and body["strict_ok"] is False and len(body["drift"]) == 2


def test_a_config_change_drifts_every_result_built_before_it(root):
    path = root / "config/config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["audit"]["chunk_mib"] = cfg["audit"].get("chunk_mib", 64) + 1
    path.write_text(yaml.safe_dump(cfg))
    drifted = {p for d in verify_tree(root).drift if d.kind == "config" for p in d.paths}
    assert drifted == {
        "results/stats/clean.json",
        "results/stats/dirty.json",
        "results/stats/old.json",
    }


def test_without_drift_verify_is_strictly_clean(root):
    for name in ("dirty.json", "old.json"):
        (root / "results/stats" / name).unlink()
    (root / "models/base/tiny/identity.json").unlink()
    shutil.rmtree(root / "models")
    report = verify_tree(root)
    assert report.strict_ok and report.drift == [], format_report(report)


def test_an_invalid_config_is_a_note_and_no_config_drift(root):
    (root / "config/config.yaml").write_text("sandbox: {}\n")
    report = verify_tree(root)
    assert {d.kind for d in report.drift} == {"dirty"}
    assert any(n.startswith("config hashes not compared:") for n in report.notes)
