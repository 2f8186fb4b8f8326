"""Rules eval_plan, eval_model and eval_model_scores through Snakemake.

The run test uses a scratch Snakefile (``rules/common.smk`` + ``rules/eval.smk``) on a toy
frozen suite and a small random policy saved as the base model (it writes no valid action, so
every patch is empty: valid 0 without a sandbox run); the ledger's retries and docker grading
are tested in ``tests/evaluation``. The dry run uses the real Snakefile with the eval rules
included, from an empty tree (a fresh clone).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from checkout import copy_sources
from taskfactory import REPO, make_calc_task, write_control_records

from editcredit.data.freeze import write_parquet

SNAKEFILE = """\
from snakemake.utils import validate


configfile: "config/config.yaml"


validate(config, "config/schema.yaml", set_default=True)


include: "rules/common.smk"
include: "rules/eval.smk"


rule all:
    input:
        PLAN.eval_targets,
"""
EVAL_RULES = ("eval_plan", "eval_model", "eval_model_scores")


def smk(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--nolock", *args]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)


def _random_policy(out: Path) -> None:
    from editcredit.io.identity import write_identity
    from editcredit.policy.chat import ChatTemplate
    from editcredit.policy.model import new_model, tiny_config
    from editcredit.policy.tokenizer import train_tokenizer

    tok = train_tokenizer(
        ["edit calc.py\n- return a - b\n+ return a + b", "run", "submit"] * 20, 300
    )
    chat = ChatTemplate(tok)
    arch = dict(
        hidden_size=32,
        intermediate_size=64,
        num_layers=1,
        num_heads=2,
        num_kv_heads=1,
        max_positions=1024,
    )
    model = new_model(tiny_config(len(tok), arch, chat.pad, chat.bos, chat.end_of_turn), seed=0)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    write_identity(out, config={"test": "random policy"})  # every base carries its receipt


@pytest.fixture
def scratch(tmp_path):
    copy_sources(["rules/common.smk", "rules/eval.smk", "scripts", "config", "envs"], tmp_path)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    cfg = yaml.safe_load((tmp_path / "config/config.yaml").read_text())
    cfg["agent"].update(max_turns=2, max_new_tokens=12)
    cfg["evaluation"].update(
        models=["base"],
        batch_size=3,
        evalsets={
            "holdout": {"suite": "toy", "splits": ["holdout"], "samples": 2},
            "broad": {"suite": "toy", "splits": ["dev"], "samples": 1},
        },
    )
    (tmp_path / "config/config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    base = make_calc_task()
    tasks = [
        base.model_copy(update={"instance_id": f"toy__calc__{i}", "split": split})
        for i, split in enumerate(["holdout", "holdout", "holdout", "dev"])
    ]
    write_parquet(tasks, tmp_path / "data/frozen/toy/tasks.parquet")
    timings = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 1.0}}
    write_control_records(  # rule control's per-task records (not in this scratch workflow)
        tmp_path / "results/controls/toy/tasks", {t.instance_id: timings for t in tasks}
    )
    _random_policy(tmp_path / "models/base" / cfg["training"]["model"])
    return tmp_path


@pytest.mark.slow
def test_eval_rules_write_every_slot_file_and_scores_and_a_rerun_changes_nothing(scratch):
    proc = smk(scratch, "--cores", "2")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    plan = json.loads((scratch / "results/eval/plan.json").read_text())
    assert plan["slots"] == 7 and plan["version"] == 1 and "provenance" in plan
    out = scratch / "results/eval/base"
    for evalset, tasks, n in (("holdout", 3, 2), ("broad", 1, 1)):
        files = sorted((out / evalset).glob("toy__*.json"))
        assert len(files) == tasks
        for f in files:
            body = json.loads(f.read_text())
            assert body["plan_sha256"] == plan["plan_sha256"] and body["provenance"]["inputs"]
            assert [s["sample"] for s in body["slots"]] == list(range(n))
            for slot in body["slots"]:
                assert slot["state"] in ("decided", "unresolved")
                assert sum(a["outcome"] == "report" for a in slot["attempts"]) <= 1
        rows = pq.read_table(out / evalset / "slots.parquet").to_pylist()
        assert len(rows) == tasks * n
        scores = json.loads((out / evalset / "scores.json").read_text())
        assert scores["N"] == tasks * n and len(scores["bounds"]) == 2
        assert len(list((out / evalset / "predictions").glob("sample_*.jsonl"))) == n
    assert (scratch / "results/benchmarks/eval_model/base/holdout.tsv").is_file()

    journals = sorted(out.glob("*/attempts/*/journal.jsonl"))
    journal_bytes = {p: p.read_bytes() for p in journals}
    slot_files = {p: _without_provenance(p) for p in out.glob("*/toy__*.json")}
    proc = smk(scratch, "--cores", "2", "--forcerun", "eval_model")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for path, data in journal_bytes.items():
        assert path.read_bytes() == data, path  # not one attempt more
    for path, body in slot_files.items():
        assert _without_provenance(path) == body, path  # (the code commit may have moved)
    log = (scratch / "logs/eval_model/base/holdout.log").read_text()
    assert '"attempts": {}' in log and '"policy_loaded": false' in log


def _without_provenance(path: Path) -> dict:
    body = json.loads(path.read_text())
    body.pop("provenance")
    return body


@pytest.fixture
def fresh(tmp_path):
    """The real workflow files with the eval rules included, no outputs (a fresh clone)."""
    names = ["Snakefile", "rules", "scripts", "config", "profiles", "envs"]
    copy_sources([n for n in names if Path(REPO, n).exists()], tmp_path)
    snakefile = tmp_path / "Snakefile"
    if 'include: "rules/eval.smk"' not in snakefile.read_text():
        snakefile.write_text(snakefile.read_text() + '\n\ninclude: "rules/eval.smk"\n')
    return tmp_path


def test_dry_run_from_a_fresh_clone_plans_every_eval_job(fresh):
    targets = [
        "results/eval/base/holdout/scores.json",
        "results/eval/M-s42/broad/scores.json",
    ]
    proc = smk(fresh, "-n", "--cores", "2", *targets, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    for rule in EVAL_RULES:
        assert f"rule {rule}:" in out or f"{rule}  " in out or rule in out
    assert "results/eval/plan.parquet" in out
    assert "runs/M-s42/step_4" in out  # the endpoint checkpoint is an input


def test_eval_rules_are_lint_clean(fresh):
    proc = smk(fresh, "--lint", timeout=300)
    out = proc.stdout + proc.stderr
    for rule in EVAL_RULES:
        assert f"Lints for rule {rule} " not in out, out[-3000:]


def test_an_unknown_eval_model_is_named(fresh):
    extra = fresh / "extra.yaml"
    extra.write_text("evaluation:\n  models: [base, X-s1]\n")
    proc = smk(fresh, "-n", "--cores", "1", "--configfile", str(extra), timeout=300)
    assert proc.returncode != 0
    assert "X-s1" in proc.stdout + proc.stderr


def test_diagnostic_steps_are_separate_models_from_intermediate_checkpoints(fresh):
    extra = fresh / "extra.yaml"
    # segments of 2 steps (the default's length may differ): step 2 ends one, step 3 none
    segments = "training:\n  segment_steps: 2\n"
    extra.write_text(segments + "evaluation:\n  diagnostic_steps: [2]\n")
    target = "results/eval/M-s42-step2/holdout/scores.json"
    proc = smk(fresh, target, "-n", "--cores", "1", "--configfile", str(extra), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "runs/M-s42/step_2" in proc.stdout and "model=M-s42-step2" in proc.stdout
    extra.write_text(segments + "evaluation:\n  diagnostic_steps: [3]\n")
    proc = smk(fresh, target, "-n", "--cores", "1", "--configfile", str(extra), timeout=300)
    assert proc.returncode != 0 and "diagnostic_steps: 3" in proc.stdout + proc.stderr
