"""The GPU-box presets: a dry run of the whole DAG with ``profiles/gpu``, ``gpu-box.yaml`` and
``tiny-large.yaml`` requests one GPU for every rule that generates or trains, none elsewhere, and
builds the larger policy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import copy_sources
from taskfactory import REPO

FILES = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")
PRESETS = ("config/presets/gpu-box.yaml", "config/presets/tiny-large.yaml")
GPU_RULES = {"base_model", "training_pool", "train_segment", "control_replay", "eval_model"}


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("gpubox")
    copy_sources(FILES, root)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-n",
        "--workflow-profile",
        "profiles/gpu",
        "--resources",
        "gpu=8",
        "--configfile",
        *PRESETS,
        "--printshellcmds",
    ]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


def _jobs(text: str) -> list[tuple[str, str]]:
    """(rule, resources line) of every planned job."""
    jobs, rule = [], None
    for line in text.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):", line.strip())
        if m:
            rule = m.group(1)
        elif rule and line.strip().startswith("resources:"):
            jobs.append((rule, line.strip()))
            rule = None
    return jobs


def test_generating_and_training_rules_request_one_gpu(dry_run):
    jobs = _jobs(dry_run)
    seen = {rule for rule, _ in jobs}
    assert GPU_RULES <= seen, seen
    for rule, resources in jobs:
        if rule == "all":  # the target rule declares nothing
            continue
        gpus = int(re.search(r"\bgpu=(\d+)", resources).group(1))
        assert gpus == (1 if rule in GPU_RULES else 0), (rule, resources)
    training = _layered()["training"]
    runs = sum(len(seeds) for seeds in training["plan"].values())
    segments = training["endpoint_step"] // training["segment_steps"]
    assert runs * segments > runs  # every run has segments before its endpoint
    assert sum(rule == "train_segment" for rule, _ in jobs) == runs * segments


def _layered() -> dict:
    """config/config.yaml with the presets layered over it, as the dry run reads them."""
    import yaml

    cfg = yaml.safe_load(Path(REPO, "config/config.yaml").read_text())
    for preset in PRESETS:
        cfg = _merge(cfg, yaml.safe_load(Path(REPO, preset).read_text()))
    return cfg


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def test_presets_layer_into_a_valid_config_with_the_larger_policy():
    import yaml

    from editcredit.config import validate_config
    from editcredit.policy.generator_factory import GenerationSettings

    base = yaml.safe_load(Path(REPO, "config/config.yaml").read_text())
    cfg = _layered()
    validate_config(cfg, source="+".join(PRESETS))
    settings = GenerationSettings.from_config(cfg["generation"])
    assert (settings.backend, settings.fast.compile) == ("fast", False)
    assert cfg["sandbox"]["backend"] == "local" and cfg["training"]["ray"]["enabled"] is False
    arch, default = cfg["models"]["tiny"]["architecture"], base["models"]["tiny"]["architecture"]
    assert arch["hidden_size"] == 512 and arch["num_layers"] == 8
    assert set(arch) == set(default)
