"""Pinned bases: import_model checks the pin; an in-place edit of a hard-linked import's source
makes train_segment, control_replay and eval_model refuse, naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobfactory import eval_files, job_settings
from qwenfactory import write_stock_qwen2
from taskfactory import CONFIG

from editcredit.audit.base_pin import BaseDrifted, changed_files, check_base, guard_base
from editcredit.io.identity import files_sha256, write_identity
from editcredit.io.provenance import sha256_path
from editcredit.policy.base_job import import_model

STOCK_FILES = [
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
]


def _hf_dir(path: Path) -> Path:
    """A stock Qwen2 directory (import checks that its chat template plays)."""
    return write_stock_qwen2(path)


def _edit_in_place(path: Path) -> None:
    """Overwrite bytes without replacing the file (the inode, so every hard link, changes)."""
    with path.open("r+b") as fh:
        fh.seek(8)
        fh.write(b"\x01")


@pytest.fixture
def imported(tmp_path, monkeypatch):
    """models/base/ext imported (hard-linked) from a source directory; cwd = the workdir."""
    monkeypatch.chdir(tmp_path)
    src = _hf_dir(tmp_path / "source")
    pin = import_model(str(src), Path("models/base/ext"), {"source": "import", "path": str(src)})
    return src, pin


@pytest.mark.parametrize(
    ("expected", "actual", "changed"),
    [
        ({"a": "1", "b": "2"}, {"a": "1", "b": "2"}, []),
        ({"a": "1", "b": "2"}, {"a": "1", "b": "3"}, ["b (changed)"]),
        ({"a": "1", "b": "2"}, {"a": "1"}, ["b (missing)"]),
        ({"a": "1"}, {"a": "1", "c": "9"}, ["c (new)"]),
        ({"b": "2", "a": "1"}, {"a": "0", "c": "9"}, ["a (changed)", "b (missing)", "c (new)"]),
    ],
)
def test_changed_files_names_each_difference(expected, actual, changed):
    assert changed_files(expected, actual) == changed


def test_import_returns_the_receipt_table_hash_and_a_matching_pin_passes(imported, tmp_path):
    src, pin = imported
    receipt = json.loads(Path("models/base/ext/identity.json").read_text())
    assert pin == files_sha256(receipt["files"])
    assert sorted(receipt["files"]) == STOCK_FILES
    again = import_model(
        str(src), tmp_path / "again", {"source": "import", "path": str(src), "receipt_sha256": pin}
    )
    assert again == pin
    check = check_base("models/base/ext", pin)
    assert check["pinned"] and check["files"] == len(STOCK_FILES) and check["files_sha256"] == pin
    assert check["directory_sha256"] == sha256_path("models/base/ext")


def test_import_of_other_files_fails_against_the_pin_and_leaves_nothing(imported, tmp_path):
    src, pin = imported
    (src / "generation_config.json").write_text('{"changed": true}\n')
    out = tmp_path / "models/base/other"
    with pytest.raises(BaseDrifted, match=f"models.other.receipt_sha256 pins {pin}"):
        import_model(
            str(src), out, {"source": "import", "path": str(src), "receipt_sha256": pin}, "other"
        )
    assert not out.exists()


def test_an_in_place_edit_of_the_source_changes_the_base_and_is_refused(imported):
    src, pin = imported
    _edit_in_place(src / "model.safetensors")
    for given in (pin, ""):  # pinned or not, the files are checked against the receipt
        with pytest.raises(BaseDrifted, match=r"model\.safetensors \(changed\)") as err:
            check_base("models/base/ext", given)
        assert "config.json" not in str(err.value)


def test_a_rewritten_receipt_is_refused_by_the_pin(imported):
    src, pin = imported
    _edit_in_place(src / "model.safetensors")
    write_identity("models/base/ext", {})  # the receipt now matches the edited files
    check_base("models/base/ext")  # unpinned: nothing left to compare with
    with pytest.raises(BaseDrifted, match=f"identity.json: its file table hashes to .* pins {pin}"):
        check_base("models/base/ext", pin)


def test_guard_applies_to_configured_bases_only(imported, tmp_path):
    src, pin = imported
    models = {"ext": {"source": "import", "receipt_sha256": pin}}
    assert guard_base("models/base/ext", models)["pinned"]
    assert guard_base("models/base/ext", {"ext": {"source": "import"}})["pinned"] is False
    assert guard_base(str(src), models) is None  # a checkpoint or any other directory
    assert guard_base("models/base/ext", None) is None
    with pytest.raises(BaseDrifted, match="no identity receipt"):
        check_base(src)  # the source itself has no receipt


def _train(previous: str, config):
    from editcredit.job_settings import SegmentSettings
    from editcredit.rl.train_job import SegmentJob, train_segment_job

    job = SegmentJob(
        run="M-s42",
        step=int(CONFIG["training"]["segment_steps"]),
        previous=previous,
        tasks="data/frozen/none/tasks.parquet",
        controls=None,
        out_dir="runs/M-s42/step_2",
    )
    return train_segment_job(
        job,
        job_settings(SegmentSettings),
        gpus=0,
        threads=1,
        config=config,
        models=config["models"],
    )


def _control(base: str, config):
    from editcredit.job_settings import ControlReplaySettings
    from editcredit.rl.train_job import ControlReplayJob, control_replay_job

    job = ControlReplayJob(
        seed=42,
        base_model=base,
        tasks="data/frozen/none/tasks.parquet",
        controls=None,
        out="results/training/control/s42.parquet",
    )
    return control_replay_job(
        job,
        job_settings(ControlReplaySettings),
        gpus=0,
        threads=1,
        config=config,
        models=config["models"],
    )


def _evaluate(model_dir: str, config):
    from editcredit.evaluation.job import eval_model_job
    from editcredit.job_settings import EvalModelSettings

    job = eval_files(model_dir, "data/frozen/none/tasks.parquet", model="base")
    settings = job_settings(EvalModelSettings)
    return eval_model_job(job, settings, gpus=0, threads=1, config=config, models=config["models"])


def _audit(base: str, config):
    from editcredit.audit.jobs import audit_params_job

    return audit_params_job(
        "runs/M-s42/step_2/model",
        base,
        None,
        "results/audits/M-s42/step_2.json",
        "M-s42",
        2,
        2,
        {"chunk_mib": 1},
        config,
        models=config["models"],
    )


JOBS = [_train, _control, _evaluate, _audit]
JOB_IDS = ["train", "control", "eval", "audit"]


@pytest.mark.parametrize("job", JOBS, ids=JOB_IDS)
def test_editing_a_pinned_base_in_place_makes_the_job_refuse_naming_the_file(imported, job):
    src, pin = imported
    config = {"models": {"ext": {"source": "import", "path": str(src), "receipt_sha256": pin}}}
    _edit_in_place(src / "config.json")
    with pytest.raises(BaseDrifted, match=r"models/base/ext: config\.json \(changed\)"):
        job("models/base/ext", config)
    assert not Path("runs").exists() and not Path("results").exists()


@pytest.mark.parametrize("job", JOBS, ids=JOB_IDS)
def test_an_intact_pinned_base_passes_the_check(imported, job):
    """The check passes, and the job goes on to its next input (absent here)."""
    src, pin = imported
    config = {"models": {"ext": {"source": "import", "path": str(src), "receipt_sha256": pin}}}
    try:
        job("models/base/ext", config)
    except BaseDrifted:
        raise
    except Exception as exc:  # noqa: BLE001 - any other error comes after the check
        assert any(p in str(exc) for p in ("tasks.parquet", "plan.parquet", "step_2/model"))
    else:
        pytest.fail("the job ran without its inputs")
