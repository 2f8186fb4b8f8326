"""Each rule's job lives at one place named after the rule, every script is the same lines, and
the harness owns the log, the GPU declaration, the settings record and the console line."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from editcredit.config import load_config
from editcredit.jobs import job_of, run_rule
from editcredit.jobs.harness import Job, JobContext, rule_files

ROOT = Path(__file__).resolve().parents[2]
RULE = re.compile(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", re.MULTILINE)
SCRIPT = re.compile(r'script:\s*\n\s*"\.\./scripts/([\w]+)\.py"')


def rules_with_scripts() -> dict[str, str]:
    """Rule name -> its script's file name, from rules/*.smk."""
    found = {}
    for smk in sorted((ROOT / "rules").glob("*.smk")):
        for match in RULE.finditer(smk.read_text()):
            script = SCRIPT.search(match.group(2))
            if script:
                found[match.group(1)] = script.group(1)
    return found


def test_every_rule_with_a_script_has_its_job_module_named_after_it():
    rules = rules_with_scripts()
    assert len(rules) >= 27
    missing = [r for r in rules if not (ROOT / f"src/editcredit/jobs/{r}.py").is_file()]
    assert not missing, f"rules without src/editcredit/jobs/<rule>.py: {missing}"
    for rule in rules:
        job = job_of(rule)
        assert isinstance(job, Job) and job.rule == rule


def test_every_rule_runs_the_script_named_after_it():
    renamed = {rule: script for rule, script in rules_with_scripts().items() if rule != script}
    assert not renamed, f"rules whose script is not scripts/<rule>.py: {renamed}"


def test_every_job_module_is_a_rule():
    modules = {p.stem for p in (ROOT / "src/editcredit/jobs").glob("*.py")}
    assert modules - {"__init__", "harness", "setup"} == set(rules_with_scripts())


def test_every_script_is_the_same_few_lines():
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    used = {f"{s}.py" for s in rules_with_scripts().values()}
    assert {p.name for p in scripts} == used
    texts = {p.read_text() for p in scripts}
    assert len(texts) == 1, "every script runs its rule's job the same way"
    (text,) = texts
    assert "run_rule(snakemake)" in text and len(text.splitlines()) <= 6
    assert "config" not in text


def fake_rule(tmp_path: Path, rule: str, **extra) -> SimpleNamespace:
    return SimpleNamespace(
        rule=rule,
        log=[str(tmp_path / "logs" / f"{rule}.log")],
        resources=SimpleNamespace(gpu=1, gpu_mem_mb=4096),
        threads=3,
        config={"k": 1},
        **extra,
    )


def test_the_harness_logs_declares_the_gpu_and_prints_the_console_line(tmp_path, capsys):
    seen = {}

    def call(inputs, settings, ctx):
        print("inside the job")
        seen.update(inputs=inputs, settings=settings, ctx=ctx)
        return {"line": "the verdict"}

    job = Job("demo", inputs=lambda sm: sm.wildcards, call=call, gpu=True,
              console=lambda r: r["line"])  # fmt: skip
    os.environ.pop("EDITCREDIT_GPU_MEM_MB", None)
    sm = fake_rule(tmp_path, "demo", wildcards={"run": "O-s0"})
    assert job.run(sm) == {"line": "the verdict"}
    assert os.environ.pop("EDITCREDIT_GPU_MEM_MB") == "4096"
    assert seen["inputs"] == {"run": "O-s0"} and seen["settings"] is None
    assert seen["ctx"] == JobContext("demo", 1, 3, {"k": 1})
    log = (tmp_path / "logs" / "demo.log").read_text()
    assert "inside the job" in log and "the verdict" not in log
    assert capsys.readouterr().out == "the verdict\n"


def test_the_harness_rebuilds_the_settings_record_strictly(tmp_path):
    class Record:
        @classmethod
        def from_mapping(cls, data):
            return ("record", dict(data))

    job = Job("demo", inputs=rule_files, call=lambda sm, s, ctx: s, settings=Record)
    sm = fake_rule(tmp_path, "demo", params=SimpleNamespace(settings={"a": 1}))
    assert job.run(sm) == ("record", {"a": 1})


def test_a_job_refuses_another_rule_and_an_expected_error_is_one_console_line(tmp_path, capsys):
    job = Job("demo", inputs=rule_files, call=lambda sm, s, ctx: None)
    with pytest.raises(ValueError, match="run for rule 'other'"):
        job.run(fake_rule(tmp_path, "other"))

    def fails(sm, s, ctx):
        raise LookupError("install TeX")

    job = Job("demo", inputs=rule_files, call=fails, console_errors=(LookupError,))
    with pytest.raises(SystemExit) as exc:
        job.run(fake_rule(tmp_path, "demo"))
    assert exc.value.code == 1
    assert capsys.readouterr().err == "rule demo: install TeX\n"
    assert "failed" in (tmp_path / "logs" / "demo.log").read_text()


def test_run_rule_runs_the_job_named_after_the_rule(monkeypatch):
    ran = []
    monkeypatch.setattr("editcredit.jobs.job_of", lambda rule: SimpleNamespace(run=ran.append))
    sm = SimpleNamespace(rule="paired")
    run_rule(sm)
    assert ran == [sm]


def test_budgets_and_values_from_the_settings_tree_are_the_config_s():
    config = load_config(ROOT / "config/config.yaml")
    ctx = JobContext("train_segment", 0, 1, config)
    for name in ("run", "evaluation", "base_model"):
        assert ctx.budget(name) == config["budgets"][name]
    assert ctx.study_budget("no-such-study") is None
    assert ctx.settings.training.health.to_dict() == config["training"]["health"]
    for name, cfg in config["models"].items():  # the pins guard_base reads
        assert ctx.models()[name].get("receipt_sha256") == cfg.get("receipt_sha256")
    for suite, cfg in config["suites"].items():
        assert ctx.settings.suites[suite].manifest_sha256 == cfg["manifest_sha256"]
