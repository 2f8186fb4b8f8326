"""The default suite, generated and validated in the real docker sandbox as `freeze_suite` does
it, freezes to the manifest hash pinned in config/config.yaml: a change to the generator, the
mutation operators or the grading contract that changes the suite cannot land without a new,
deliberate pin (a fresh clone's pipeline would stop at its first rule otherwise)."""

from __future__ import annotations

import json

from taskfactory import CONFIG

from editcredit.suites.build import build_suite


def test_the_default_suite_freezes_to_its_pin(docker_ready, tmp_path):
    cfg = CONFIG
    pin = cfg["suites"]["minibugs"]["manifest_sha256"]
    digest = build_suite("minibugs", cfg["suites"]["minibugs"], cfg["sandbox"], tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert digest == pin, f"rejected: {manifest['generator'].get('rejected')}"
