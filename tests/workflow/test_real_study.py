"""The real study's path, end to end, run for real on this machine through Snakemake.

``--configfile config/presets/full-study.yaml config/presets/real-study.yaml`` and one small
test layer (``real_study_layer.yaml``: paths, sizes, ``generation.backend: transformers``) build
the whole DAG: the offline image suite's SWE-bench-format JSONL imported and frozen, the
controls graded in each instance's own image (gold 1, empty 0), a Qwen2-architecture directory
with the stock Qwen2.5 chat template and ``<tool_call>`` format imported as it is (no tokens
added), the bash environment, two arms (O and M, M with counterfactual credit) for two steps,
the parameter audits, the evaluation, the statistics and the compiled paper.

The imported model is built here: the stock directory of ``qwenfactory`` trained by the
project's SFT on expert episodes of the train split played in the real bash environment
(``bashqwenfactory``), so that it calls the tool, sometimes fixes the bug and sometimes not:
rewards differ within a group, the update moves the policy, and credit reaches the fixing turns.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from bashqwenfactory import write_bash_qwen2
from checkout import copy_sources
from imagefactory import image_suite  # noqa: F401 (fixture)
from qwenfactory import QWEN2_SPECIAL
from taskfactory import CONFIG

pytestmark = pytest.mark.docker

FILES = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "paper")
PRESETS = ("config/presets/full-study.yaml", "config/presets/real-study.yaml")
LAYER = Path(__file__).with_name("real_study_layer.yaml")
#: the split of each image-suite repository: three to train on, one dev, two held out
SPLITS = {
    "textkit": "train",
    "numkit": "train",
    "unitkit": "train",
    "shapes": "dev",
    "djangoish": "holdout",
    "minisympy": "holdout",
}
RUNS = ("O-s42", "M-s42")


def dataset_with_splits(source: Path, out: Path) -> Path:
    """The suite's JSONL with a ``split`` on every row (SWE-bench rows carry no split)."""
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    lines = [json.dumps({**r, "split": SPLITS[r["repo"].split("/")[1]]}) for r in rows]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def study(tmp_path_factory, image_suite):  # noqa: F811
    root = tmp_path_factory.mktemp("realstudy")
    copy_sources(FILES, root)
    (root / "inputs").mkdir()
    jsonl = dataset_with_splits(image_suite.jsonl, root / "inputs" / "tasks.jsonl")
    train = [t for t in image_suite.tasks if SPLITS[t.repo.split("/")[1]] == "train"]
    layer = yaml.safe_load(LAYER.read_text())
    hf = write_bash_qwen2(
        root / "inputs" / "coder",
        train,
        {**CONFIG["agent"], "max_turns": layer["agent"]["max_turns"]},
        CONFIG["sandbox"],
    )
    layer["models"]["coder"]["path"] = str(hf)
    layer["suites"]["swebench"]["source"] = str(jsonl)
    (root / "study.yaml").write_text(yaml.safe_dump(layer, sort_keys=False))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", *PRESETS, "study.yaml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    return root, hf, proc


def test_the_real_study_runs_from_the_dataset_to_the_paper(study):
    root, _, proc = study
    for rule in ("import_model", "freeze_suite", "control", "train_segment", "audit_params"):
        assert f"rule {rule}:" in proc.stderr or f"localrule {rule}:" in proc.stderr, rule
    assert (root / "paper/main.pdf").stat().st_size > 10_000
    assert not (root / "data/frozen/minibugs").exists()  # the preset removed the default's suite
    frozen = pd.read_parquet(root / "data/frozen/swebench/tasks.parquet")
    assert sorted(frozen["split"]) == sorted(SPLITS.values())
    controls = json.loads((root / "results/controls/swebench/summary.json").read_text())
    assert controls["gold_1"] == controls["empty_0"] == 6 and controls["flagged"] == 0


def test_the_stock_directory_is_imported_as_it_is(study):
    root, hf, _ = study
    from transformers import AutoTokenizer

    model = root / "models/base/coder"
    assert json.loads((model / "identity.json").read_text())
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (model / name).read_bytes() == (hf / name).read_bytes()
    assert sorted(AutoTokenizer.from_pretrained(str(model)).get_added_vocab()) == sorted(
        QWEN2_SPECIAL
    )


def test_training_played_the_bash_tool_and_m_credited_its_edits(study):
    root, _, _ = study
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(root / "models/base/coder"))
    for run in RUNS:
        step = root / "runs" / run / "step_2"
        rollouts = pd.read_parquet(step / "rollouts.parquet")
        assert len(rollouts) == 2 * 2 * 2  # 2 steps x 2 tasks x 2 samples
        assert set(rollouts["split"]) == {"train"}
        sampled = [
            tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
            for ids, mask in zip(rollouts["token_ids"], rollouts["loss_mask"], strict=True)
        ]
        assert sum("<tool_call>" in text for text in sampled) >= len(sampled) // 2  # its format
        commands = [t["action_text"] for turns in rollouts["turns"] for t in json.loads(turns)]
        assert any(c.startswith("sed -i ") for c in commands)  # ... as bash commands
        assert rollouts["reward"].nunique() > 1  # the groups' rewards differ: a gradient
        assert (step / "model" / "model.safetensors").is_file()
    credit = pd.read_parquet(root / "runs/M-s42/step_2/credit.parquet")
    assert credit["available"].all() and (credit["D"] != 0).any()
    assert pd.read_parquet(root / "runs/O-s42/step_2/credit.parquet").empty  # arm O: no query


def test_audits_evaluation_and_stats_cover_both_runs_and_the_base(study):
    root, _, _ = study
    audits = pd.read_parquet(root / "results/audits/summary.parquet")
    assert set(audits["run"]) == set(RUNS)
    for model in ("base", *RUNS):
        for evalset, tasks in (("holdout", 2), ("broad", 6)):
            scores = json.loads((root / f"results/eval/{model}/{evalset}/scores.json").read_text())
            assert scores["n_tasks"] == tasks, (model, evalset)
    for name, a, b in (("M-O", "M", "O"), ("O-base", "O", "base")):
        paired = json.loads((root / f"results/stats/paired/{name}.json").read_text())
        assert (paired["arm_a"], paired["arm_b"]) == (a, b)
