"""The GPU-box presets: a dry run of the whole DAG with ``profiles/gpu``, ``gpu-box.yaml`` and
``tiny-large.yaml`` requests one GPU for every rule that generates or trains, none elsewhere,
declares the GPU memory each such job holds (``editcredit.policy.gpu_memory``), and builds the
larger policy; from those declarations, how many of each job share an 80 GB and a 141 GB card."""

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
        "gpu=32",
        "gpu_mem_mb=81047",
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


def _declared(jobs: list[tuple[str, str]]) -> dict[str, set[int]]:
    """The gpu_mem_mb values each rule's jobs declare (0 where a rule declares none)."""
    out: dict[str, set[int]] = {}
    for rule, resources in jobs:
        m = re.search(r"\bgpu_mem_mb=(\d+)", resources)
        out.setdefault(rule, set()).add(int(m.group(1)) if m else 0)
    return out


def test_gpu_rules_declare_the_memory_of_the_library_estimate(dry_run):
    from editcredit.config import validate_config
    from editcredit.policy.gpu_memory import rule_gpu_mem_mb
    from editcredit.settings import Settings

    settings = Settings.from_config(validate_config(_layered()))
    declared = _declared(_jobs(dry_run))
    for rule, values in declared.items():
        if rule in GPU_RULES:
            model = "tiny" if rule == "base_model" else None
            assert values == {rule_gpu_mem_mb(settings, rule, model)}, rule
            assert min(values) > 0
        else:
            assert values == {0}, rule


# GPU jobs at once on one card, from the declarations (memory less the ledger's reserve), with
# at most --cores 16 / 2 threads a job: an 80 GB H100 and a 141 GB H200
AT_ONCE = {
    81559: {"eval_model": 8, "train_segment": 8, "control_replay": 8, "base_model": 2},
    143771: {"eval_model": 8, "train_segment": 8, "control_replay": 8, "base_model": 4},
}
ALONE = {
    81559: {"eval_model": 18, "train_segment": 9, "control_replay": 9, "base_model": 2},
    143771: {"eval_model": 32, "train_segment": 16, "control_replay": 16, "base_model": 4},
}


@pytest.mark.parametrize("card_mb", sorted(ALONE))
def test_jobs_sharing_a_card_by_their_declared_memory(dry_run, card_mb):
    from editcredit.policy.devices import RESERVE_MB
    from editcredit.policy.gpu_memory import jobs_at_once

    declared = _declared(_jobs(dry_run))
    free = card_mb - RESERVE_MB
    for rule, expected in ALONE[card_mb].items():
        (mb,) = declared[rule]
        assert jobs_at_once(free, mb) == expected, rule
        assert jobs_at_once(free, mb, cap=16 // 2) == AT_ONCE[card_mb][rule], rule
    # the seven training runs' segments all fit on the 80 GB card beside one evaluation
    runs = sum(len(seeds) for seeds in _layered()["training"]["plan"].values())
    (train,), (evaluation,) = declared["train_segment"], declared["eval_model"]
    assert runs * train + evaluation <= free


def _priorities(text: str) -> dict[str, set[int]]:
    """Rule -> the priorities its planned jobs declare (0 where the dry run prints none)."""
    out: dict[str, set[int]] = {}
    rule, priority = None, 0
    for line in text.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):", line.strip())
        if m:
            rule, priority = m.group(1), 0
        elif rule and line.strip().startswith("priority:"):
            priority = int(line.split(":", 1)[1])
        elif rule and line.strip().startswith("resources:"):
            out.setdefault(rule, set()).add(priority)
            rule = None
    return out


def test_a_ready_segment_goes_before_the_jobs_that_are_not_on_the_chain(dry_run):
    """Where jobs outnumber the box's slots, the segments (each run's chain) are chosen first:
    the 0eda673 and ab45834 runs on an H100 started a run's first segment 187 s after the
    others, behind evaluations with larger inputs (docs/scale.md)."""
    priorities = _priorities(dry_run)
    segment = min(priorities["train_segment"])
    for rule in ("eval_model", "control_replay", "stop_checkpoints", "eval_model_scores"):
        assert max(priorities[rule]) < segment, (rule, priorities[rule], segment)
