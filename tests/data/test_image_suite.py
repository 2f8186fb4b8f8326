"""The offline image-based suite: real histories, SWE-bench rows, and images without the future."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from imagefactory import image_suite, task_by_repo  # noqa: F401 - fixture
from taskfactory import CONFIG, REPO

from editcredit.sandbox.docker_backend import docker_client
from editcredit.suites.image import (
    IMAGE_TEMPLATE,
    LABEL_RECIPE,
    build_image_suite,
    git,
    load_suite_tasks,
    write_suite,
)


def test_histories_are_real_and_deterministic(tmp_path):
    jsonl, repos = write_suite(tmp_path / "a")
    again, repos_again = write_suite(tmp_path / "b")
    assert jsonl.read_bytes() == again.read_bytes()
    tasks = load_suite_tasks(jsonl)
    assert len(tasks) == 6
    for task in tasks:
        repo = repos[task.instance_id]
        assert repo.commits == repos_again[task.instance_id].commits
        assert len(repo.commits) == 4 and repo.base_commit == repo.commits[2]
        parent = git(repo.path, "rev-parse", f"{repo.fix_commit}^").decode().strip()
        assert parent == task.base_commit == repo.base_commit
        assert task.image == IMAGE_TEMPLATE.format(instance_id=task.instance_id)
        assert task.files is None and task.workdir == "/testbed"
        fix = git(repo.path, "show", "--format=", repo.fix_commit).decode()
        assert task.patch and task.patch in fix
        assert task.test_patch in fix
        for line in task.patch.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                assert line[1:].strip() not in task.problem_statement


def test_rows_follow_swebench_and_test_paths_come_from_the_test_patch(tmp_path):
    jsonl, _ = write_suite(tmp_path)
    rows = {r["instance_id"]: r for r in map(json.loads, jsonl.read_text().splitlines())}
    assert all(isinstance(r["FAIL_TO_PASS"], str) for r in rows.values())  # JSON-encoded
    tasks = {t.repo: t for t in load_suite_tasks(jsonl)}
    assert tasks["editcredit/textkit"].test_paths == ["tests/test_core.py"]
    assert tasks["editcredit/numkit"].test_patch == ""
    assert tasks["editcredit/numkit"].test_paths == ["tests/test_stats.py"]
    runners = {name.split("/")[1]: (t.test_runner, t.test_command) for name, t in tasks.items()}
    assert runners == {
        "textkit": ("pytest", []),
        "numkit": ("pytest", []),
        "shapes": ("pytest", []),
        "unitkit": ("unittest", []),
        "djangoish": ("django", ["./tests/runtests.py", "--verbosity", "2", "--parallel", "1"]),
        "minisympy": ("sympy", ["bin/test", "-C", "--verbose"]),
    }
    assert tasks["editcredit/djangoish"].test_paths == ["tests/text/tests.py"]
    assert tasks["editcredit/minisympy"].FAIL_TO_PASS == ["test_igcd_negative"]


IMAGE_PROBE = """
import json, os
root = "/testbed/.git"
objects = sorted(
    sub + name
    for sub in os.listdir(root + "/objects") if len(sub) == 2
    for name in os.listdir(root + "/objects/" + sub)
)
refs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root + "/refs") for f in fs)
print(json.dumps({"objects": objects, "refs": refs, "packs": os.listdir(root + "/objects/pack")
    if os.path.isdir(root + "/objects/pack") else []}))
"""


@pytest.mark.docker
def test_images_hold_only_the_base_snapshot(image_suite):  # noqa: F811
    client = docker_client()
    for task in image_suite.tasks:
        image = client.images.get(task.image)
        assert image.id == image_suite.images[task.instance_id]
        assert image.labels["editcredit.instance_id"] == task.instance_id
        raw = client.containers.run(
            task.image, ["python3", "-c", IMAGE_PROBE], network_disabled=True, remove=True
        )
        seen = json.loads(raw)
        assert seen["refs"] == ["/testbed/.git/refs/heads/main"] and not seen["packs"]
        repo = image_suite.repos[task.instance_id]
        ctx = image_suite.jsonl.parent / "contexts" / task.instance_id / "repo"
        snapshot = git(ctx, "rev-list", "--objects", "--all").decode().split()
        assert set(seen["objects"]) == {o for o in snapshot if len(o) == 40}
        history = set(git(repo.path, "rev-list", "--objects", "--all").decode().split())
        future = history - set(
            git(repo.path, "rev-list", "--objects", repo.base_commit).decode().split()
        )
        assert future and not future & set(seen["objects"]), "the fix must not be in the image"


@pytest.mark.docker
def test_images_are_reused_and_the_cli_builds_them(image_suite, tmp_path):  # noqa: F811
    again = build_image_suite(tmp_path / "again", CONFIG["sandbox"]["image"])
    assert again.built == [] and again.images == image_suite.images
    label = docker_client().images.get(again.tasks[0].image).labels[LABEL_RECIPE]
    assert len(label) == 64
    proc = subprocess.run(
        [sys.executable, "-m", "editcredit.cli", "build-task-images", "--out", str(tmp_path / "c")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(": present") == 6 and "tasks.jsonl" in proc.stdout
