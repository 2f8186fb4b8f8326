"""The editcredit command: one clear error line for bad input, nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from taskfactory import REPO, make_calc_task

from editcredit.cli import main


def run_cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "editcredit.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture
def task_file(tmp_path):
    path = tmp_path / "TASK.json"
    path.write_text(json.dumps(make_calc_task().model_dump(mode="json")))
    return path


def one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("editcredit: error: ")
    for needle in needles:
        assert needle in lines[0]


def test_grade_gold_and_empty_through_docker(task_file, docker_ready):
    gold = run_cli("grade", "--task", str(task_file), "--gold")
    assert gold.returncode == 0, gold.stderr
    assert json.loads(gold.stdout)["resolved"] == 1
    empty = run_cli("grade", "--task", str(task_file))
    assert json.loads(empty.stdout)["resolved"] == 0


def test_grade_a_patch_file_locally(task_file, tmp_path):
    patch = tmp_path / "fix.diff"
    patch.write_text(make_calc_task().patch)
    proc = run_cli("grade", "--task", str(task_file), "--patch", str(patch), "--backend", "local")
    report = json.loads(proc.stdout)
    assert report["resolved"] == 1
    assert "weaker" in report["sandbox"]["isolation"]


def test_grade_holds_tests_to_the_controls_recorded_gold_times(task_file, tmp_path):
    controls = tmp_path / "controls"
    controls.mkdir()
    task = make_calc_task()
    timings = {"collect_s": 0.1, "tests": {"test_calc.py::test_add": 2.0}}
    record = {"instance_id": task.instance_id, "gold": {"sandbox": {"timings": timings}}}
    (controls / f"{task.instance_id}.json").write_text(json.dumps(record))
    patch = tmp_path / "fix.diff"
    patch.write_text(task.patch)
    args = ["grade", "--task", str(task_file), "--patch", str(patch), "--backend", "local"]
    report = json.loads(run_cli(*args, "--controls", str(controls)).stdout)
    limits = report["sandbox"]["limits"]
    # factor 10 x 2.0 s for the timed test; the slowest timed test's limit for the others
    assert limits["tests"] == {"test_calc.py::test_add": 20.0} and limits["default_s"] == 20.0
    assert limits["collect_s"] == 10.0 and limits["gold_timed"]
    assert report["resolved"] == 1
    one_error_line(run_cli(*args, "--controls", str(tmp_path / "nope")), "--controls", "nope")


def test_malformed_task_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**make_calc_task().model_dump(mode="json"), "FAIL_TO_PASS": []}))
    one_error_line(run_cli("grade", "--task", str(bad)), str(bad), "FAIL_TO_PASS")
    notjson = tmp_path / "notjson.json"
    notjson.write_text("{nope")
    one_error_line(run_cli("grade", "--task", str(notjson)), "not valid JSON")


def test_patch_that_is_not_a_diff(task_file, tmp_path):
    prose = tmp_path / "prose.diff"
    prose.write_text("please fix add so that it adds\n")
    one_error_line(
        run_cli("grade", "--task", str(task_file), "--patch", str(prose)),
        str(prose),
        "not a unified diff",
    )


def test_unknown_backend(task_file):
    one_error_line(
        run_cli("grade", "--task", str(task_file), "--backend", "qemu"), "unknown backend 'qemu'"
    )


def test_no_docker_daemon(task_file):
    proc = run_cli(
        "grade",
        "--task",
        str(task_file),
        "--gold",
        env_extra={"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
    )
    one_error_line(proc, "no docker daemon", "/nonexistent/docker.sock")


def test_export_task_unknown_id_writes_nothing(tmp_path, capsys):
    from editcredit.data.freeze import freeze

    freeze([make_calc_task()], tmp_path / "toy", "toy", {}, None)
    out = tmp_path / "out.json"
    code = main(
        [
            "export-task",
            "--suite",
            "toy",
            "--id",
            "nope",
            "--out",
            str(out),
            "--frozen-dir",
            str(tmp_path),
        ]
    )
    assert code == 2 and not out.exists()
    assert "no task 'nope'" in capsys.readouterr().err
    assert (
        main(
            [
                "export-task",
                "--suite",
                "toy",
                "--id",
                "toy__calc__add",
                "--out",
                str(out),
                "--frozen-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["instance_id"] == "toy__calc__add"
