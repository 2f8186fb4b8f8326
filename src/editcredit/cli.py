"""The ``editcredit`` command: grade one task, export a task, build the sandbox image, verify.

Every failure is one line on stderr, ``editcredit: error: ...``, and exit status 2; nothing is
written unless the whole output is ready. ``verify`` exits 1 when it finds mismatches (with
``--strict``, also when it finds drift: outputs built from a dirty tree or another config).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from editcredit.config import ConfigError, load_config
from editcredit.data.freeze import FrozenSuiteError, load_tasks, task_from_record
from editcredit.io.atomic import atomic_write_text
from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.factory import BACKENDS, make_sandbox
from editcredit.sandbox.patches import PatchFormatError, split_patch
from editcredit.sandbox.workspace import TaskTreeError

DEFAULT_CONFIG = "config/config.yaml"


class UsageError(ValueError):
    """Bad command-line input."""


def _read_task(path: str):
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"task file {path}: no such file")
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"task file {path}: not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise UsageError(f"task file {path}: expected a JSON object")
    return task_from_record(record, f"task file {path}")


def _read_patch(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"patch file {path}: no such file")
    text = p.read_text(encoding="utf-8", errors="replace")
    if text.strip():
        try:
            split_patch(text)
        except PatchFormatError as exc:
            raise UsageError(f"patch file {path}: {exc}") from None
    return text


def cmd_grade(args: argparse.Namespace) -> int:
    from editcredit.grading.grader import grade_tree

    if args.backend not in BACKENDS:
        raise UsageError(f"unknown backend {args.backend!r}; choose one of {', '.join(BACKENDS)}")
    config = load_config(args.config)
    task = _read_task(args.task)
    if args.gold:
        patch = task.patch
    elif args.patch:
        patch = _read_patch(args.patch)
    else:
        patch = ""  # the empty control: run the base tree's tests
    grading = config["grading"]  # validated: the schema filled its defaults
    book = None
    if args.controls:
        from editcredit.sandbox.limits import GoldTimesBook, load_gold_times

        if not Path(args.controls).is_dir():
            raise UsageError(f"--controls {args.controls}: no such directory")
        try:
            book = GoldTimesBook(load_gold_times(args.controls))
        except ValueError as exc:
            raise UsageError(f"--controls: {exc}") from None
    with make_sandbox(args.backend, config["sandbox"], book) as sandbox:
        report = grade_tree(task, patch, sandbox, grading["f_weight"], grading["g_weight"])
    print(json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True))
    return 0


def cmd_export_task(args: argparse.Namespace) -> int:
    path = Path(args.frozen_dir) / args.suite / "tasks.parquet"
    tasks = {t.instance_id: t for t in load_tasks(path)}
    if args.id not in tasks:
        raise UsageError(f"suite {args.suite}: no task {args.id!r} in {path}")
    text = json.dumps(tasks[args.id].model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    if args.out:
        atomic_write_text(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_build_image(args: argparse.Namespace) -> int:
    from editcredit.sandbox.image import ensure_image

    cfg = load_config(args.config)["sandbox"]
    how = ensure_image(cfg["image"], cfg["pull_ref"], cfg["debian_suite"], cfg["debian_mirror"])
    print(f"sandbox image {cfg['image']}: {how}")
    return 0


def cmd_build_task_images(args: argparse.Namespace) -> int:
    from editcredit.suites.image import build_image_suite

    cfg = load_config(args.config)["sandbox"]
    suite = build_image_suite(args.out, cfg["image"], rebuild=args.rebuild)
    for task in suite.tasks:
        how = "built" if task.instance_id in suite.built else "present"
        print(f"{task.image}: {how}")
    print(f"tasks: {suite.jsonl}")
    return 0


def cmd_conformance(args: argparse.Namespace) -> int:
    from editcredit.conformance.pins import PinsError, load_pins
    from editcredit.conformance.report import load_results, merge_results, text_table
    from editcredit.conformance.suite import run_suite, select_projects

    config = load_config(args.config)
    try:
        pins = load_pins(args.pins)
        names = [n for n in (args.projects or "").split(",") if n]
        projects = select_projects(pins, names, args.ci)
    except PinsError as exc:
        raise UsageError(str(exc)) from None
    weights = (config["grading"]["f_weight"], config["grading"]["g_weight"])

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    out = Path(args.out)
    keep = load_results(out / "conformance.json") if args.merge else []
    results = run_suite(
        projects,
        Path("."),
        Path(args.cache),
        config["sandbox"],
        weights,
        out,
        log,
        keep=keep,
        order=pins.names(),
    )
    shown = merge_results(keep, results, pins.names())
    sys.stdout.write(text_table(shown))
    return 0 if all(r.ok for r in shown) else 1


def cmd_verify(args: argparse.Namespace) -> int:
    from editcredit.audit.verify import format_report, report_json, verify_tree

    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: no such directory")
    report = verify_tree(root, args.config)
    sys.stdout.write(format_report(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report_json(report), indent=2) + "\n")
    return 0 if (report.strict_ok if args.strict else report.ok) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="editcredit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade a patch on one task and print the report")
    grade.add_argument("--task", required=True, help="TASK.json (see export-task)")
    which = grade.add_mutually_exclusive_group()
    which.add_argument("--patch", help="a unified diff to grade")
    which.add_argument("--gold", action="store_true", help="grade the task's gold patch")
    grade.add_argument("--backend", default="docker", help="docker (default) or local")
    grade.add_argument("--config", default=DEFAULT_CONFIG)
    grade.add_argument(
        "--controls",
        help="the control rule's per-task directory (results/controls/SUITE/tasks): per-test "
        "limits from its recorded gold-run times (default: one gold run measures them)",
    )
    grade.set_defaults(func=cmd_grade)
    export = sub.add_parser("export-task", help="write one frozen task as TASK.json")
    export.add_argument("--suite", required=True)
    export.add_argument("--id", required=True)
    export.add_argument("--out", help="output file (default: stdout)")
    export.add_argument("--frozen-dir", default="data/frozen")
    export.set_defaults(func=cmd_export_task)
    image = sub.add_parser("build-image", help="pull or build the sandbox base image")
    image.add_argument("--config", default=DEFAULT_CONFIG)
    image.set_defaults(func=cmd_build_image)
    task_images = sub.add_parser(
        "build-task-images",
        help="write the offline image-based suite (repositories, tasks.jsonl) and its images",
    )
    task_images.add_argument("--out", required=True, help="directory for repos and tasks.jsonl")
    task_images.add_argument("--rebuild", action="store_true", help="rebuild present images")
    task_images.add_argument("--config", default=DEFAULT_CONFIG)
    task_images.set_defaults(func=cmd_build_task_images)
    conf = sub.add_parser(
        "conformance",
        help="grade pinned real projects and compare with their own runners (exit 1 on any "
        "mismatch); docs/conformance.md",
    )
    conf.add_argument("--pins", default="conformance/projects.yaml")
    conf.add_argument("--projects", help="comma-separated names (default: every project)")
    conf.add_argument("--ci", action="store_true", help="only the projects marked ci")
    conf.add_argument("--cache", default="cache/conformance", help="downloads, trees, runs")
    conf.add_argument("--out", default="results/conformance", help="report directory")
    conf.add_argument(
        "--merge",
        action="store_true",
        help="keep the other projects' results of the report in --out (rerun a few projects)",
    )
    conf.add_argument("--config", default=DEFAULT_CONFIG)
    conf.set_defaults(func=cmd_conformance)
    verify = sub.add_parser(
        "verify",
        help="re-hash frozen data, models, checkpoints and results; exit 1 on any mismatch",
    )
    verify.add_argument("--root", default=".", help="the workflow directory (default: .)")
    verify.add_argument(
        "--config", default=DEFAULT_CONFIG, help="config with the pins (relative to --root)"
    )
    verify.add_argument("--json", help="also write the findings as JSON to this file")
    verify.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 also on drift: outputs built from a dirty tree or under another config",
    )
    verify.set_defaults(func=cmd_verify)
    return parser


ERRORS = (UsageError, ConfigError, FrozenSuiteError, SandboxError, TaskTreeError, OSError)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ERRORS as exc:
        print(f"editcredit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
