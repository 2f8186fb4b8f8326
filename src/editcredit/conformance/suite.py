"""Run the conformance suite: per project, the reference runs and the grader's, compared.

For each project: its image (:mod:`editcredit.conformance.build`); the project's own runner in
that image on three trees (clean, the benign gold edit, the planted bug), as a user would run
it (plugins load as installed; pytest writes JUnit XML, Django its ``-v 2`` lines); then a task
whose FAIL_TO_PASS are the tests the bug stops passing in the reference and whose PASS_TO_PASS
are the other passing ones, graded by the real docker sandbox on the empty patch (the clean
tree), the gold diff and the bug diff; then :func:`editcredit.conformance.compare.judge_project`.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from editcredit.conformance.build import BuildError, Built, build_project_image, edited_copy
from editcredit.conformance.compare import (
    ProjectResult,
    comparable_id,
    expected_lists,
    judge_project,
)
from editcredit.conformance.edits import edit_diff
from editcredit.conformance.fetch import FetchError
from editcredit.conformance.pins import Edit, Project
from editcredit.conformance.reference import (
    ReferenceError_,
    django_statuses,
    junit_statuses,
    sympy_statuses,
)

REFERENCE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}
DJANGO_COMMAND = ["./tests/runtests.py", "--verbosity", "2", "--parallel", "1"]
SYMPY_COMMAND = ["bin/test", "-C", "--verbose"]


def reference_command(project: Project) -> list[str]:
    """The project's own runner on its chosen test files."""
    if project.runner == "pytest":
        return [
            "python3",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-o",
            "junit_family=xunit1",
            "--junitxml=/out/junit.xml",
            *project.tests,
        ]
    if project.runner == "django":
        command = list(project.command) or DJANGO_COMMAND
        labels = [
            ".".join(t[: -len(".py")].split("/")[1:]) if t.startswith("tests/") else t
            for t in project.tests
        ]
        return ["python3", *command, *labels]
    command = list(project.command) or SYMPY_COMMAND
    return ["python3", *command, *project.tests]


def reference_statuses(project: Project, out: Path, text: str) -> dict[str, str]:
    if project.runner == "pytest":
        junit = out / "junit.xml"
        if not junit.is_file():
            raise ReferenceError_(f"pytest wrote no JUnit XML; output ends:\n{text[-1500:]}")
        return junit_statuses(junit.read_text(encoding="utf-8"), list(project.tests), text)
    if project.runner == "django":
        return django_statuses(text)
    return sympy_statuses(text)


def run_reference(
    client, image: str, project: Project, tree: Path, work: Path
) -> tuple[dict[str, str], str]:
    """(test -> status, runner output) of the project's own runner on ``tree``."""
    from editcredit.sandbox.docker_backend import LABEL, remove_container
    from editcredit.sandbox.owners import owned_labels

    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    container = client.containers.run(
        image,
        command=reference_command(project),
        working_dir="/testbed",
        volumes={
            str(tree): {"bind": "/testbed", "mode": "rw"},
            str(out): {"bind": "/out", "mode": "rw"},
        },
        environment=REFERENCE_ENV,
        network_disabled=True,
        detach=True,
        labels=owned_labels(LABEL),
    )
    try:
        try:
            container.wait(timeout=project.timeout_s)
        except Exception as exc:
            raise ReferenceError_(
                f"the reference run did not end within {project.timeout_s:.0f} s"
            ) from exc
        text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    finally:
        remove_container(container)
    (work / "output.txt").write_text(text, encoding="utf-8")
    return reference_statuses(project, out, text), text


def task_id(runner: str, test: str) -> str:
    """A reference test's id in the task's naming (Django: ``test_x (module.Class)``)."""
    if runner == "django":
        where, name = test.rsplit(".", 1)
        return f"{name} ({where})"
    return test


def make_task(project: Project, built: Built, gold: str, f2p: list[str], p2p: list[str]):
    from editcredit.data.task import Task

    return Task(
        instance_id=f"conformance__{project.name}",
        repo=f"conformance/{project.name}",
        problem_statement=f"conformance of {project.name} {project.version}".strip(),
        patch=gold,
        test_runner=project.runner,
        FAIL_TO_PASS=[task_id(project.runner, t) for t in f2p],
        PASS_TO_PASS=[task_id(project.runner, t) for t in p2p],
        test_paths=list(project.tests),
        image=built.image,
        workdir="/testbed",
        timeout_s=project.timeout_s,
        suite="conformance",
        test_command=list(project.command),
    )


def grader_statuses(report, runner: str) -> dict[str, str]:
    from editcredit.grading.verdicts import item_status

    if report.sandbox is None:
        return {}
    out: dict[str, str] = {}
    for item in report.sandbox.observations.items:
        out[comparable_id(runner, item.nodeid)] = item_status(item)
    return out


def _diff(tree: Path, edit: Edit) -> str:
    return edit_diff((tree / edit.path).read_text(encoding="utf-8"), edit)


def run_project(
    project: Project,
    repo_root: Path,
    cache: Path,
    sandbox_cfg: dict[str, Any],
    weights,
    client,
    log=print,
) -> ProjectResult:
    """One project end to end; set-up failures are the result's ``error``, never raised."""
    from editcredit.grading.grader import grade_tree
    from editcredit.sandbox.factory import make_sandbox

    started = time.monotonic()
    result = ProjectResult(project.name, project.version, project.runner)
    work = cache.resolve() / "runs" / project.name  # kept for inspection until the next run
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        built = build_project_image(project, repo_root, cache, sandbox_cfg["image"], client)
        log(f"{project.name}: image {built.image} ({'built' if built.rebuilt else 'present'})")
        edits = {"clean": None, "gold": project.gold, "bug": project.bug}
        reference = {}
        for run, edit in edits.items():
            tree = edited_copy(built.tree, edit, work / run / "tree")
            statuses, text = run_reference(client, built.image, project, tree, work / run)
            reference[run] = {comparable_id(project.runner, t): s for t, s in statuses.items()}
            if not statuses:
                tail = "\n".join(text.strip().splitlines()[-6:])
                raise ReferenceError_(
                    f"the reference {run} run saw no tests; its output ends:\n{tail}"
                )
            log(f"{project.name}: reference {run}: {len(statuses)} tests")
        f2p, p2p = expected_lists(reference["clean"], reference["bug"])
        if not f2p:
            raise ReferenceError_("the planted bug stops no passing test in the reference run")
        patches = {
            "clean": "",
            "gold": _diff(built.tree, project.gold),
            "bug": _diff(built.tree, project.bug),
        }
        task = make_task(project, built, patches["gold"], f2p, p2p)
        cfg = dict(sandbox_cfg)
        if project.mem_limit:
            cfg["mem_limit"] = project.mem_limit
        grader, verdicts, reports = {}, {}, {}
        with make_sandbox("docker", cfg) as sandbox:
            for run, patch in patches.items():
                report = grade_tree(task, patch, sandbox, *weights)
                reports[run] = report.model_dump(mode="json")
                grader[run] = grader_statuses(report, project.runner)
                verdict = report.verdict or report.outcome
                verdicts[run] = (verdict, report.tampering, report.reason)
                if report.sandbox is not None and report.sandbox.observations.collect_errors:
                    errors = report.sandbox.observations.collect_errors
                    result.collect_errors[run] = [
                        f"{e['nodeid']}: {e['message'].splitlines()[0][:200]}" for e in errors[:5]
                    ]
                log(f"{project.name}: grader {run}: {verdict} ({report.reason[:120]})")
        (work / "gradings.json").write_text(json.dumps(reports, indent=1, default=str))
        judge_project(result, reference, grader, verdicts)
    except (BuildError, FetchError, ReferenceError_, ValueError, RuntimeError, OSError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"[:2000]
    result.seconds = round(time.monotonic() - started, 1)
    return result


def select_projects(pins, names: list[str] | None, ci_only: bool) -> list[Project]:
    """The named projects (in the list's order), the CI subset, or every project."""
    if names:
        return [pins.by_name(n) for n in names]
    return [p for p in pins.projects if p.ci or not ci_only]


def run_suite(
    projects: list[Project],
    repo_root: Path,
    cache: Path,
    sandbox_cfg: dict[str, Any],
    weights,
    out_dir: Path | None = None,
    log=print,
    keep: list[ProjectResult] | None = None,
    order: list[str] | None = None,
) -> list[ProjectResult]:
    """Every project in turn; the JSON report and text table under ``out_dir`` when given,
    holding also the results in ``keep`` of projects not run now (in ``order``)."""
    from editcredit.conformance.report import merge_results, report_json, text_table
    from editcredit.io.atomic import atomic_write_text
    from editcredit.sandbox.docker_backend import docker_client

    client = docker_client()
    results = []
    for project in projects:
        results.append(run_project(project, repo_root, cache, sandbox_cfg, weights, client, log))
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            names = order or [p.name for p in projects]
            shown = merge_results(keep or [], results, names)
            atomic_write_text(out_dir / "conformance.json", report_json(shown))
            atomic_write_text(out_dir / "conformance.txt", text_table(shown))
    return results
