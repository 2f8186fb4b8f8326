"""A small image-based suite, built offline: real git histories, one docker image per instance.

Each of the six tiny repositories (three tested with pytest, one with plain ``unittest``, one
Django-style with ``tests/runtests.py`` and one SymPy-style with ``bin/test``) has a real
history: good commits, then a commit that
introduces a bug (the base commit), then a later fix commit. The suite is written in SWE-bench's
format (``tasks.jsonl``: the fix commit's non-test diff is ``patch``, its test diff
``test_patch``) and imported with :func:`editcredit.suites.swebench_import.import_tasks`, each task
naming its image through :data:`IMAGE_TEMPLATE`.

An instance's image is built ``FROM`` the offline sandbox base image with ``/testbed`` holding
the base tree and a *fresh* git repository whose only commit is that tree: the fix commit, its
blobs and every other ref of the source history are absent from the image. Images are named
``editcredit-task:{instance_id}`` and labelled with the SHA256 of their recipe (base image id,
files, snapshot commit); an image whose label matches is reused, not rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from editcredit.data.task import Task
from editcredit.io.hashing import sha256_text
from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.patches import is_protected_path
from editcredit.suites.swebench_import import import_tasks

SUITE = "imagebugs"
IMAGE_TEMPLATE = "editcredit-task:{instance_id}"
WORKDIR = "/testbed"
TIMEOUT_S = 60.0
LABEL_SUITE = "editcredit.task-image"
LABEL_RECIPE = "editcredit.recipe_sha256"
_DATE = "2024-01-{day:02d}T12:00:00+00:00"


class ImageSuiteError(SandboxError):
    """The suite's repositories or images could not be made."""


@dataclass(frozen=True)
class Commit:
    message: str
    files: dict[str, str]  # path -> new text


@dataclass(frozen=True)
class RepoSpec:
    """One repository: its history up to the bug (the base), the later fix, the test ids."""

    name: str
    number: int
    problem: str
    history: tuple[Commit, ...]  # the last one introduces the bug: the base commit
    fix: Commit
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    test_paths: tuple[str, ...] = ()  # given when the fix changes no test file
    test_runner: str = "pytest"
    test_command: tuple[str, ...] = ()  # the runner's command without labels (() = default)

    @property
    def instance_id(self) -> str:
        return f"editcredit__{self.name}-{self.number}"


def _specs() -> tuple[RepoSpec, ...]:
    from editcredit.suites.image_repos import REPOS
    from editcredit.suites.image_runner_repos import RUNNER_REPOS

    return (*REPOS, *RUNNER_REPOS)


@dataclass(frozen=True)
class RepoInfo:
    path: Path
    commits: tuple[str, ...]  # every commit, oldest first; the last is the fix
    base_commit: str
    fix_commit: str


@dataclass(frozen=True)
class ImageSuite:
    """The built suite: tasks (image-based), the JSONL they came from, host repos, images."""

    tasks: list[Task]
    jsonl: Path
    repos: dict[str, RepoInfo]  # instance_id -> full-history repository on the host
    images: dict[str, str]  # instance_id -> image id
    built: list[str]  # instance ids whose image was (re)built by this call


def git(root: Path, *args: str, day: int = 1, stdin: bytes | None = None) -> bytes:
    """Run git in ``root`` with a fixed identity, dates and no user or system config."""
    date = _DATE.format(day=day)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "editcredit",
        "GIT_AUTHOR_EMAIL": "editcredit@example.invalid",
        "GIT_COMMITTER_NAME": "editcredit",
        "GIT_COMMITTER_EMAIL": "editcredit@example.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    proc = subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True)
    if proc.returncode != 0:
        raise ImageSuiteError(f"git {' '.join(args)} in {root}: {proc.stderr.decode().strip()}")
    return proc.stdout


def _commit(root: Path, commit: Commit, day: int) -> str:
    for rel, text in commit.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A", day=day)
    git(root, "commit", "-q", "-m", commit.message, day=day)
    return git(root, "rev-parse", "HEAD").decode().strip()


def write_repository(spec: RepoSpec, root: Path) -> RepoInfo:
    """A fresh repository at ``root`` with the spec's whole history, the fix last."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    git(root, "init", "-q", "--template=", "-b", "main")
    commits = [_commit(root, c, day) for day, c in enumerate([*spec.history, spec.fix], 1)]
    return RepoInfo(root, tuple(commits), commits[-2], commits[-1])


def _diff(repo: RepoInfo, paths: list[str]) -> str:
    if not paths:
        return ""
    args = ["diff", "--no-color", "--no-ext-diff", "--no-renames", repo.base_commit]
    return git(repo.path, *args, repo.fix_commit, "--", *paths).decode()


def task_row(spec: RepoSpec, repo: RepoInfo) -> dict:
    """The SWE-bench-format row of one instance (id lists JSON-encoded, as published)."""
    changed = git(repo.path, "diff", "--name-only", repo.base_commit, repo.fix_commit)
    paths = sorted(changed.decode().split())
    tests = [p for p in paths if is_protected_path(p, list(spec.test_paths))]
    row = {
        "repo": f"editcredit/{spec.name}",
        "instance_id": spec.instance_id,
        "base_commit": repo.base_commit,
        "patch": _diff(repo, [p for p in paths if p not in tests]),
        "test_patch": _diff(repo, tests),
        "problem_statement": spec.problem,
        "hints_text": "",
        "created_at": _DATE.format(day=len(spec.history) + 1),
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps(list(spec.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(list(spec.pass_to_pass)),
    }
    if spec.test_paths:
        row["test_paths"] = json.dumps(list(spec.test_paths))
    if spec.test_runner != "pytest":
        row["test_runner"] = spec.test_runner
    if spec.test_command:
        row["test_command"] = json.dumps(list(spec.test_command))
    return row


def write_suite(out_dir: str | Path) -> tuple[Path, dict[str, RepoInfo]]:
    """The repositories under ``out_dir/repos`` and ``out_dir/tasks.jsonl`` (no docker)."""
    out = Path(out_dir)
    repos = {s.instance_id: write_repository(s, out / "repos" / s.name) for s in _specs()}
    lines = [json.dumps(task_row(s, repos[s.instance_id]), sort_keys=True) for s in _specs()]
    jsonl = out / "tasks.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return jsonl, repos


def load_suite_tasks(jsonl: Path) -> list[Task]:
    return import_tasks(jsonl, SUITE, image_template=IMAGE_TEMPLATE, timeout_s=TIMEOUT_S)


def _base_tree(repo: RepoInfo, dest: Path) -> None:
    """The base commit's files (``git archive``: no .git) extracted into ``dest``."""
    archive = git(repo.path, "archive", "--format=tar", repo.base_commit)
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")


def image_context(repo: RepoInfo, ctx: Path, base_image: str, base_image_id: str) -> str:
    """Write the build context (Dockerfile, ``repo/`` = base tree + a one-commit repository);
    return the recipe SHA256 (base image id, Dockerfile, files, snapshot commit)."""
    shutil.rmtree(ctx, ignore_errors=True)
    tree = ctx / "repo"
    _base_tree(repo, tree)
    files = {
        str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }
    git(tree, "init", "-q", "--template=", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "base snapshot")
    snapshot = git(tree, "rev-parse", "HEAD").decode().strip()
    dockerfile = f"FROM {base_image}\nCOPY repo/ {WORKDIR}/\nWORKDIR {WORKDIR}\n"
    (ctx / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    recipe = {"base": base_image_id, "dockerfile": dockerfile, "files": files, "head": snapshot}
    return sha256_text(json.dumps(recipe, sort_keys=True))


def build_image(client, tag: str, ctx: Path, labels: dict[str, str]) -> str:
    """``docker build`` of ``ctx`` as ``tag`` with no network and no pull; the image id."""
    try:
        image, _logs = client.images.build(
            path=str(ctx),
            tag=tag,
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
        )
    except Exception as exc:
        raise ImageSuiteError(f"docker build of {tag} failed: {exc}") from exc
    return image.id


def build_image_suite(
    out_dir: str | Path, base_image: str, rebuild: bool = False, client=None
) -> ImageSuite:
    """Write the suite under ``out_dir`` and make sure every instance's image exists."""
    from editcredit.sandbox.docker_backend import docker_client

    client = client or docker_client()
    try:
        base_id = client.images.get(base_image).id
    except Exception as exc:
        raise ImageSuiteError(
            f"base image {base_image!r} not found; build it with `editcredit build-image`"
        ) from exc
    out = Path(out_dir)
    jsonl, repos = write_suite(out)
    tasks = load_suite_tasks(jsonl)
    images, built = {}, []
    for task in tasks:
        assert task.image is not None
        ctx = out / "contexts" / task.instance_id
        recipe = image_context(repos[task.instance_id], ctx, base_image, base_id)
        current = _existing(client, task.image)
        if current is not None and not rebuild and current.labels.get(LABEL_RECIPE) == recipe:
            images[task.instance_id] = current.id
            continue
        labels = {
            LABEL_SUITE: SUITE,
            LABEL_RECIPE: recipe,
            "editcredit.instance_id": task.instance_id,
            "editcredit.base_commit": task.base_commit,
        }
        images[task.instance_id] = build_image(client, task.image, ctx, labels)
        built.append(task.instance_id)
    return ImageSuite(tasks, jsonl, repos, images, built)


def _existing(client, tag: str):
    try:
        return client.images.get(tag)
    except Exception:
        return None
