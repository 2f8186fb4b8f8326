"""``editcredit verify``: exit 0 when clean, 1 with every mismatch and its tables, 2 on bad use."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from taskfactory import REPO

from editcredit.config import load_config
from editcredit.io import provenance
from editcredit.io.provenance import write_result_json, write_result_tex


def clean_code(dirty: bool = False) -> dict:
    return {
        "package_version": "0",
        "git_commit": "c" * 40,
        "git_dirty": dirty,
        "git_diff_sha256": "d" * 64 if dirty else None,
        "git_untracked_sha256": None,
        "git_untracked_files": 0,
    }


def pinned_config(pin: str) -> str:
    """The repository's config with one suite, toy (the default suite's settings), pinned to
    ``pin``."""
    config = yaml.safe_load(Path(REPO, "config", "config.yaml").read_text())
    config["suites"] = {"toy": {**config["suites"]["minibugs"], "manifest_sha256": pin}}
    return yaml.safe_dump(config, sort_keys=False)


def verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "editcredit.cli", "verify", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A frozen suite pinned in the config, a result built from it, a table built from that;
    all built from a clean tree (whatever the checkout running the test holds)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(provenance, "code_version", lambda: clean_code())
    suite = tmp_path / "data/frozen/toy"
    suite.mkdir(parents=True)
    (suite / "tasks.parquet").write_bytes(bytes(range(256)))
    manifest = json.dumps(
        {"tasks_parquet_sha256": hashlib.sha256(bytes(range(256))).hexdigest()}
    ).encode()
    (suite / "manifest.json").write_bytes(manifest)
    (tmp_path / "config").mkdir()
    pin = hashlib.sha256(manifest).hexdigest()
    (tmp_path / "config/config.yaml").write_text(pinned_config(pin))
    config = load_config(tmp_path / "config/config.yaml")  # the results are built under it
    tasks = "data/frozen/toy/tasks.parquet"
    write_result_json("results/controls/toy/summary.json", {"n": 1}, [tasks], config)
    write_result_json(
        "results/stats/c.json", {"d": 0}, ["results/controls/toy/summary.json"], config
    )
    write_result_tex("paper/tables/main.tex", "\\relax\n", ["results/stats/c.json"], config)
    write_result_tex("paper/tables/other.tex", "\\relax\n", [], config)
    return tmp_path


def test_clean_tree_exits_0(tree):
    proc = verify("--root", str(tree))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "clean" in proc.stdout


def test_one_changed_byte_of_frozen_data_exits_1_and_names_the_tables(tree, tmp_path):
    path = tree / "data/frozen/toy/tasks.parquet"
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    out = tmp_path / "findings.json"
    proc = verify("--root", str(tree), "--json", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISMATCH [frozen,input] data/frozen/toy/tasks.parquet" in proc.stdout
    assert "tables that would change (1):" in proc.stdout
    assert (
        "paper/tables/main.tex  <-  results/stats/c.json  <-  "
        "results/controls/toy/summary.json  <-  data/frozen/toy" in proc.stdout
    )
    assert "other.tex" not in proc.stdout
    (finding,) = json.loads(out.read_text())["findings"]
    assert list(finding["tables"]) == ["paper/tables/main.tex"]


def test_default_root_is_the_working_directory(tree):  # the fixture chdirs into it
    (tree / "results/stats/c.json").write_text("{}")  # no provenance block any more
    proc = verify()
    assert proc.returncode == 1
    assert "MISMATCH [provenance,input] results/stats/c.json" in proc.stdout


def test_missing_root_is_a_usage_error(tmp_path):
    proc = verify("--root", str(tmp_path / "nope"))
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == [f"editcredit: error: --root {tmp_path / 'nope'}: no such directory"]


def test_unreadable_config_is_a_usage_error(tree):
    (tree / "config/config.yaml").write_text("suites: [1\n")
    proc = verify("--root", str(tree))
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "cannot read the suite pins" in lines[0]


def test_strict_fails_on_drift_and_plain_verify_reports_it(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "code_version", lambda: clean_code())
    write_result_json(tmp_path / "results/a.json", {"n": 1}, [], {})
    assert verify("--root", str(tmp_path), "--strict").returncode == 0
    monkeypatch.setattr(provenance, "code_version", lambda: clean_code(dirty=True))
    write_result_json(tmp_path / "results/b.json", {"n": 2}, [], {})
    plain = verify("--root", str(tmp_path))
    strict = verify("--root", str(tmp_path), "--strict")
    assert (plain.returncode, strict.returncode) == (0, 1), plain.stdout + strict.stdout
    for proc in (plain, strict):
        assert (
            "DRIFT [dirty] 1 output(s) built from a dirty tree: commit cccccccccccc, "
            "uncommitted diff dddddddddddd" in proc.stdout
        )
        assert "  results/b.json" in proc.stdout and "results/a.json" not in proc.stdout
